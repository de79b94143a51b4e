/* A program that knows hipObject only through its installed files. */
#include <hipobj.h>
#include <stdio.h>
#include <string.h>

int main(void)
{
  unsigned major = 99, minor = 99, patch = 99;
  hipObjError_t e = hipObjGetVersion(&major, &minor, &patch);
  if (e.opError != hipObjSuccess || major != HIPOBJ_VERSION_MAJOR)
    return 1;
  int code = 0;
  e = hipObjParseRdmaReply("206", 3, &code);
  if (e.opError != hipObjSuccess || code != 206)
    return 2;
  /* Not initialised: transfers must say so rather than crash. */
  char buf[16];
  e = hipObjGet(NULL, buf, sizeof buf, 0, NULL, NULL);
  if (e.opError != hipObjNotInitialized && e.opError != hipObjInvalidValue)
    return 3;
  /* The information query answers before init, with the version. */
  hipObjInfo_t info;
  memset(&info, 0, sizeof info);
  info.size = sizeof info;
  e = hipObjGetInfo(&info);
  if (e.opError != hipObjSuccess || info.size != sizeof info ||
      info.initialized || info.versionMajor != HIPOBJ_VERSION_MAJOR)
    return 4;
  printf("consumer: hipObject %s, %s\n", hipObjGetVersionString(),
         hipObjGetErrorString(hipObjBusy));
  return strcmp(hipObjGetVersionString(), "") == 0;
}
