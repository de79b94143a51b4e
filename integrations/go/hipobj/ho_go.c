/* SPDX-License-Identifier: MIT */
#include "ho_go.h"

#include "_cgo_export.h"

static int ho_go_send(void *ctx, const char *token, size_t len)
{
  return hoGoSend((uintptr_t)ctx, (char *)token, len);
}

static int ho_go_recv(void *ctx, char *reply, size_t *len)
{
  return hoGoRecv((uintptr_t)ctx, reply, len);
}

static const hipObjOps_t ho_go_ops = {ho_go_send, ho_go_recv};

hipObjError_t ho_go_get(void *buf, size_t size, off_t offset, uintptr_t h)
{
  return hipObjGet(NULL, buf, size, offset, &ho_go_ops, (void *)h);
}

hipObjError_t ho_go_put(void *buf, size_t size, off_t offset, uintptr_t h)
{
  return hipObjPut(NULL, buf, size, offset, &ho_go_ops, (void *)h);
}

static void ho_go_log(void *ctx, hipObjLogLevel_t level, const char *message)
{
  (void)ctx;
  hoGoLog((int)level, (char *)message);
}

hipObjError_t ho_go_set_log(int on)
{
  return hipObjSetLogCallback(on ? ho_go_log : NULL, NULL);
}
