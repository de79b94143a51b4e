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
  hipObjInfo_t info;
  hipObjLogCallback_t log = 0;
  hipObjLogLevel_t level = hipObjLogWarning;
  info.size = (uint32_t)sizeof info;
  info.nicChoice = hipObjNicChoiceClosestToGpu;
  info.gpuRuntime = hipObjGpuRuntimeCuda;
  info.gidType = hipObjGidRoceV2;
  info.regModes = HIPOBJ_REG_HOST | HIPOBJ_REG_DMABUF | HIPOBJ_REG_PLAIN |
                  HIPOBJ_REG_STAGED;
  cfg.flags = HIPOBJ_INIT_FIRST_ACTIVE_NIC;
  (void)cfg;
  (void)ops;
  (void)log;
  return (int)e.opError + HIPOBJ_RDMA_OP_GET + HIPOBJ_SYNC_TO_DEVICE +
         (int)level + (int)info.regModes;
}
