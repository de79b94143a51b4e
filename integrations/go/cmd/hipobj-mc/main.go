// SPDX-License-Identifier: MIT

// hipobj-mc copies objects as MinIO's mc does, with the payload moved by
// RDMA where the server takes hipObject's token (miniordma), and by
// minio-go's HTTP where it declines or there is no RDMA device.
//
//	hipobj-mc [OPTIONS] cp SRC DST    # a local file or ALIAS/BUCKET/KEY each
//	hipobj-mc [OPTIONS] cat ALIAS/BUCKET/KEY
//
// Aliases come from mc's environment form, MC_HOST_<ALIAS>=
// http[s]://ACCESS_KEY:SECRET_KEY@HOST:PORT. Options: --require-rdma (no
// fallback: fail instead), --no-rdma, --nic NAME, --part-size BYTES,
// --region NAME, -v (say how the bytes moved, on stderr).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"hipobject.org/go/hipobj"
	"hipobject.org/go/miniordma"
)

type options struct {
	requireRDMA, noRDMA, verbose bool
	nic, region                  string
	partSize                     int64
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr, os.Getenv))
}

func run(args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	fs := flag.NewFlagSet("hipobj-mc", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o options
	fs.BoolVar(&o.requireRDMA, "require-rdma", false, "fail rather than fall back to HTTP")
	fs.BoolVar(&o.noRDMA, "no-rdma", false, "plain HTTP (minio-go) only")
	fs.BoolVar(&o.verbose, "v", false, "say how the bytes moved")
	fs.StringVar(&o.nic, "nic", "", "RDMA device (default: the first active one)")
	fs.StringVar(&o.region, "region", "us-east-1", "the S3 region")
	fs.Int64Var(&o.partSize, "part-size", 64<<20, "multipart part size in bytes")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: hipobj-mc [OPTIONS] cp SRC DST | cat ALIAS/BUCKET/KEY")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	a := fs.Args()
	if len(a) < 2 || (a[0] == "cp" && len(a) != 3) || (a[0] == "cat" && len(a) != 2) ||
		(a[0] != "cp" && a[0] != "cat") {
		fs.Usage()
		return 2
	}
	m := &mc{o: o, getenv: getenv, stderr: stderr}
	defer m.close()
	var err error
	if a[0] == "cat" {
		err = m.cat(a[1], stdout)
	} else {
		err = m.cp(a[1], a[2])
	}
	if err != nil {
		fmt.Fprintf(stderr, "hipobj-mc: %v\n", err)
		return 1
	}
	return 0
}

// mc holds the instance (if any) and the clients by alias.
type mc struct {
	o       options
	getenv  func(string) string
	stderr  io.Writer
	started bool
	up      bool
	clients map[string]*miniordma.Client
}

func (m *mc) init() error {
	if m.started {
		return nil
	}
	m.started = true
	if m.o.noRDMA {
		return nil
	}
	err := hipobj.Init(hipobj.Config{GPUDevice: -1, NICHint: m.o.nic,
		FirstActiveNIC: m.o.nic == ""})
	if err == nil || errors.Is(err, hipobj.AlreadyInitialized) {
		m.up = true
		return nil
	}
	if m.o.requireRDMA {
		return fmt.Errorf("RDMA required: %w", err)
	}
	if m.o.verbose {
		fmt.Fprintf(m.stderr, "hipobj-mc: no RDMA (%v): HTTP only\n", err)
	}
	return nil
}

func (m *mc) close() {
	if m.up {
		_ = hipobj.Shutdown()
	}
}

// target is ALIAS/BUCKET/KEY, or a local path (ok false).
type target struct{ alias, bucket, key string }

func (m *mc) parse(s string) (target, bool) {
	p := strings.SplitN(s, "/", 3)
	if len(p) != 3 || p[1] == "" || p[2] == "" ||
		m.getenv("MC_HOST_"+p[0]) == "" {
		return target{}, false
	}
	return target{p[0], p[1], p[2]}, true
}

func (m *mc) client(alias string) (*miniordma.Client, error) {
	if c := m.clients[alias]; c != nil {
		return c, nil
	}
	u, err := url.Parse(m.getenv("MC_HOST_" + alias))
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, fmt.Errorf("MC_HOST_%s: not http[s]://ACCESS:SECRET@HOST:PORT", alias)
	}
	creds := credentials.NewStaticV4("", "", "")
	if u.User != nil {
		sk, _ := u.User.Password()
		creds = credentials.NewStaticV4(u.User.Username(), sk, "")
	}
	c, err := miniordma.New(u.Host, &miniordma.Options{Creds: creds,
		Secure: u.Scheme == "https", Region: m.o.region,
		RequireRDMA: m.o.requireRDMA, NoRDMA: m.o.noRDMA, PartSize: m.o.partSize})
	if err != nil {
		return nil, err
	}
	if m.clients == nil {
		m.clients = map[string]*miniordma.Client{}
	}
	m.clients[alias] = c
	return c, nil
}

// buffer is registered memory with an instance, plain memory without.
func (m *mc) buffer(n int64) (*hipobj.Buffer, error) {
	if n > int64(hipobj.MaxBufferSize) {
		return nil, fmt.Errorf("%d bytes: above hipObject's 4 GiB buffer", n)
	}
	if m.up {
		return hipobj.AllocHost(int(n))
	}
	return hipobj.AllocPlain(int(n))
}

func (m *mc) say(what string, r miniordma.Result) {
	if !m.o.verbose {
		return
	}
	how := "by RDMA"
	if !r.RDMA {
		how = fmt.Sprintf("by HTTP (%s)", r.Fallback)
		if r.PartsRDMA > 0 {
			how = fmt.Sprintf("%d parts by RDMA, %d by HTTP (%s)",
				r.PartsRDMA, r.PartsHTTP, r.Fallback)
		}
	}
	fmt.Fprintf(m.stderr, "hipobj-mc: %s: %d bytes %s\n", what, r.Size, how)
}

// get reads a whole object into a new buffer (nil for an empty object).
func (m *mc) get(ctx context.Context, t target) (*hipobj.Buffer, int64, error) {
	if err := m.init(); err != nil {
		return nil, 0, err
	}
	c, err := m.client(t.alias)
	if err != nil {
		return nil, 0, err
	}
	st, err := c.Minio().StatObject(ctx, t.bucket, t.key, minio.StatObjectOptions{})
	if err != nil {
		return nil, 0, err
	}
	if st.Size == 0 {
		return nil, 0, nil
	}
	b, err := m.buffer(st.Size)
	if err != nil {
		return nil, 0, err
	}
	r, err := c.GetObject(ctx, t.bucket, t.key, b, 0,
		miniordma.GetOptions{Length: st.Size, ETag: st.ETag})
	if err != nil {
		b.Close()
		return nil, 0, err
	}
	m.say("get "+t.bucket+"/"+t.key, r)
	return b, st.Size, nil
}

func (m *mc) put(ctx context.Context, t target, b *hipobj.Buffer, n int64) error {
	if err := m.init(); err != nil {
		return err
	}
	c, err := m.client(t.alias)
	if err != nil {
		return err
	}
	if n == 0 {
		_, err := c.Minio().PutObject(ctx, t.bucket, t.key, strings.NewReader(""), 0,
			minio.PutObjectOptions{})
		return err
	}
	r, err := c.PutObject(ctx, t.bucket, t.key, b, 0, n, miniordma.PutOptions{})
	if err == nil {
		m.say("put "+t.bucket+"/"+t.key, r)
	}
	return err
}

func (m *mc) cat(src string, out io.Writer) error {
	t, ok := m.parse(src)
	if !ok {
		return fmt.Errorf("%s: not ALIAS/BUCKET/KEY with MC_HOST_ALIAS set", src)
	}
	b, n, err := m.get(context.Background(), t)
	if err != nil || b == nil {
		return err
	}
	defer b.Close()
	_, err = out.Write(b.Bytes()[:n])
	return err
}

func (m *mc) cp(src, dst string) error {
	ctx := context.Background()
	st, sRemote := m.parse(src)
	dt, dRemote := m.parse(dst)
	if !sRemote && !dRemote {
		return fmt.Errorf("cp: neither %s nor %s is ALIAS/BUCKET/KEY", src, dst)
	}
	var b *hipobj.Buffer
	var n int64
	var err error
	if sRemote {
		b, n, err = m.get(ctx, st)
	} else {
		b, n, err = m.readFile(src)
	}
	if err != nil {
		return err
	}
	if b != nil {
		defer b.Close()
	}
	if dRemote {
		return m.put(ctx, dt, b, n)
	}
	var p []byte
	if b != nil {
		p = b.Bytes()[:n]
	}
	return os.WriteFile(dst, p, 0o644)
}

func (m *mc) readFile(path string) (*hipobj.Buffer, int64, error) {
	if err := m.init(); err != nil {
		return nil, 0, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, 0, err
	}
	n := fi.Size()
	if n == 0 {
		return nil, 0, nil
	}
	b, err := m.buffer(n)
	if err != nil {
		return nil, 0, err
	}
	if _, err := io.ReadFull(f, b.Bytes()[:n]); err != nil {
		b.Close()
		return nil, 0, err
	}
	return b, n, nil
}
