/* Compiled on its own by the header_alone_server tests: the server
 * library's public header must be self-contained, C11 and C++11 clean
 * under -pedantic -Werror. */
#include "hipobj_server.h"
#include "hipobj_server.h" /* twice: the include guard works */

int use_server_header(void);
int use_server_header(void)
{
  hipObjServerConfig_t cfg = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  hipObjServerRequest_t req = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  hipObjServerReply_t rep = {0, 0, {0}, 0};
  hipObjServerStats_t st;
  hipObjServerReadFn rd = 0;
  hipObjServerWriteFn wr = 0;
  hipObjServerCommitFn cm = 0;
  hipObjServerDoneFn dn = 0;
  hipObjServer_t *srv = 0;
  hipObjServerMem_t *mem = 0;
  hipObjServerTransfer_t *x = 0;
  hipObjServerStatus_t s = hipObjServerDeclined;
  hipObjServerOp_t op = hipObjServerOpGet;
  cfg.size = (uint32_t)sizeof cfg;
  cfg.flags = HIPOBJ_SERVER_ALL_ACTIVE_NICS;
  req.size = (uint32_t)sizeof req;
  req.op = (uint32_t)op;
  req.read = rd;
  req.write = wr;
  req.commit = cm;
  req.done = dn;
  req.mem = mem;
  st.size = (uint32_t)sizeof st;
  (void)srv;
  (void)x;
  return (int)s + (int)rep.httpStatus + (int)cfg.size + (int)req.size +
         (int)st.size + HIPOBJ_SERVER_REPLY_MAX + HIPOBJ_SERVER_VERSION_MAJOR;
}
