/* SPDX-License-Identifier: MIT */
#include "ho_go_server.h"

#include "_cgo_export.h"

static int rd(void *arg, uint64_t offset, void *buf, size_t len)
{
  return hoGoSrvRead((uintptr_t)arg, offset, buf, len);
}

static int wr(void *arg, uint64_t offset, const void *buf, size_t len)
{
  return hoGoSrvWrite((uintptr_t)arg, offset, (void *)buf, len);
}

static int commit(void *arg, uint64_t bytes)
{
  return hoGoSrvCommit((uintptr_t)arg, bytes);
}

static void done(hipObjServerTransfer_t *xfer, hipObjServerStatus_t status,
                 uint64_t bytes, void *arg)
{
  (void)xfer;
  hoGoSrvDone((uintptr_t)arg, (int)status, bytes);
}

hipObjServerStatus_t ho_go_srv_start(hipObjServer_t *srv,
                                     hipObjServerRequest_t *req, int stream,
                                     int with_commit, uintptr_t h,
                                     hipObjServerReply_t *reply,
                                     hipObjServerTransfer_t **xfer)
{
  if (stream) {
    if (req->op == hipObjServerOpGet)
      req->read = rd;
    else
      req->write = wr;
    req->ioArg = (void *)h;
  }
  if (with_commit) {
    req->commit = commit;
    req->ioArg = (void *)h;
  }
  req->done = done;
  req->doneArg = (void *)h;
  return hipObjServerStart(srv, req, reply, xfer);
}

static void srv_log(void *ctx, hipObjServerLogLevel_t level,
                    const char *message)
{
  (void)ctx;
  hoGoSrvLog((int)level, (char *)message);
}

hipObjServerStatus_t ho_go_srv_set_log(int on)
{
  return hipObjServerSetLogCallback(on ? srv_log : NULL, NULL);
}
