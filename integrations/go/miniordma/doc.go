// SPDX-License-Identifier: MIT

// Package miniordma is hipObject's bridge for MinIO's Go SDK (minio-go
// v7): GetObject into and PutObject from a registered host or GPU buffer
// (hipobj.Buffer) whose payload moves by RDMA, with minio-go's own HTTP
// transfer into the same buffer when the server declines.
//
// What it does that minio-go's high-level calls cannot:
//
//   - The token travels in a lower-case x-amz-rdma-token header that is
//     part of the request when it is signed (SigV4 by minio-go's
//     pkg/signer), so the server authenticates it with the request.
//     minio-go's PutObjectOptions would rename it x-amz-meta-*.
//   - The x-amz-rdma-reply header is read on every answer: a 501 decline,
//     a GetObject's 200/206, a PutObject's or an UploadPart's 200 (which
//     minio-go's Core calls drop). A 2xx without it means the server
//     ignored the token (and may have stored an empty object): that is an
//     error, never a success.
//   - A decline (501) falls back to minio-go's Core (GetObject with the
//     same range, PutObject, PutObjectPart) into or from the same buffer;
//     RequireRDMA turns it into ErrDeclined instead. Device memory is
//     never read by the CPU: its fallback goes through Options.Stage.
//   - Multipart uploads: each part by RDMA (UploadPart with a token); the
//     ETags of RDMA parts, which their answers cannot carry, come from
//     ListParts before CompleteMultipartUpload; any failure aborts the
//     upload.
//
// The hipObject instance is the application's (hipobj.Init); without one
// (no RDMA device) every transfer is minio-go's, or ErrNoRDMA with
// RequireRDMA. Buckets are addressed path-style.
package miniordma
