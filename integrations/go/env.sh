# SPDX-License-Identifier: MIT
# Sourced by run.sh (and by hand: `. integrations/go/env.sh BUILD_DIR`): the
# environment that builds the Go packages offline on Debian 12. GOPATH mode
# (GO111MODULE=off) with two entries: a folder under the build directory in
# which hipobject.org/go is a link to integrations/go, and Debian's
# /usr/share/gocode, where golang-github-minio-minio-go-v7-dev and its
# dependencies are. No module proxy, no network. cgo finds the headers in
# include/ and the libraries in the build directory (rpath'd).
# Needs: ho_root (the source tree) and ho_build (the CMake build directory).
export GO111MODULE=off GOFLAGS= GOPROXY=off GOTOOLCHAIN=local
export GOPATH="$ho_build/go/gopath:/usr/share/gocode"
export GOCACHE="$ho_build/go/cache"
export CGO_ENABLED=1
export CGO_CFLAGS="-I$ho_root/include -O2 -g"
ho_libs="$ho_build/src:$ho_build/src/server:$ho_build/integrations/go"
export CGO_LDFLAGS="-L${ho_libs//:/ -L} -Wl,-rpath,$ho_libs"
mkdir -p "$ho_build/go/gopath/src/hipobject.org" "$GOCACHE"
ln -sfn "$ho_root/integrations/go" "$ho_build/go/gopath/src/hipobject.org/go"
ho_gopkg="$ho_build/go/gopath/src/hipobject.org/go"
