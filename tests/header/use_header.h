/* Compiled on its own by the header_alone tests: the public header must be
 * self-contained, C11 and C++11 clean under -pedantic -Werror. */
#include "hipobj.h"
#include "hipobj.h" /* twice: the include guard works */

int use_header(void);
int use_header(void)
{
  hipObjConfig_t cfg = {0, 0, 0, 0, 0, -1, 0};
  hipObjOps_t ops = {0, 0};
  hipObjError_t e = {hipObjSuccess, 0};
  (void)cfg;
  (void)ops;
  return (int)e.opError + HIPOBJ_RDMA_OP_GET + HIPOBJ_SYNC_TO_DEVICE;
}
