/* A program that knows the server library only through its installed
 * files. */
#include <hipobj_server.h>
#include <stdio.h>
#include <string.h>

int main(void)
{
  uint32_t major = 99;
  if (hipObjServerGetVersion(&major, NULL, NULL) != hipObjServerSuccess ||
      major != HIPOBJ_SERVER_VERSION_MAJOR)
    return 1;
  /* A request to no server is an argument error, not a crash. */
  hipObjServerRequest_t req;
  hipObjServerReply_t rep;
  memset(&req, 0, sizeof req);
  req.size = sizeof req;
  if (hipObjServerStart(NULL, &req, &rep, NULL) != hipObjServerInvalidValue)
    return 2;
  hipObjServerConfig_t cfg;
  memset(&cfg, 0, sizeof cfg);
  cfg.size = 4; /* too small */
  hipObjServer_t *srv = NULL;
  if (hipObjServerOpen(&cfg, &srv) != hipObjServerInvalidValue || srv)
    return 3;
  printf("server consumer: %s\n", hipObjServerStatusString(hipObjServerBusy));
  return 0;
}
