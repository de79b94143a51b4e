// SPDX-License-Identifier: MIT

package hipobj

import (
	"errors"
	"testing"
)

func TestVersionAndParseReply(t *testing.T) {
	if Version() == "" {
		t.Fatal("no version")
	}
	if c, err := ParseReply("501"); err != nil || c != 501 {
		t.Fatalf("ParseReply(501) = %d, %v", c, err)
	}
	_, err := ParseReply("bogus")
	if !errors.Is(err, InvalidValue) {
		t.Fatalf("ParseReply(bogus): %v, want InvalidValue", err)
	}
	var e *Error
	if !errors.As(err, &e) || e.Op != "hipObjParseRdmaReply" {
		t.Fatalf("not an *Error: %#v", err)
	}
}

func TestInfoWithoutInstance(t *testing.T) {
	in, err := GetInfo()
	if err != nil {
		t.Fatal(err)
	}
	if in.Version != Version() {
		t.Fatalf("version %q", in.Version)
	}
	if in.Initialized {
		t.Skip("an instance is up (fabric build)")
	}
	if _, err := AllocHost(4096); !errors.Is(err, NotInitialized) {
		t.Fatalf("AllocHost without Init: %v", err)
	}
	if _, err := RegisterDevice(0, 10); !errors.Is(err, InvalidValue) {
		t.Fatalf("RegisterDevice(0): %v", err)
	}
}

func TestInitWithoutDevice(t *testing.T) {
	err := Init(Config{GPUDevice: -1, NICHint: "no_such_nic0"})
	if err == nil {
		Shutdown()
		t.Fatal("Init succeeded on a NIC that does not exist")
	}
	if !errors.Is(err, NicNotFound) && !errors.Is(err, AlreadyInitialized) {
		t.Fatalf("Init: %v", err)
	}
	if err := Init(Config{GPUDevice: -2}); !errors.Is(err, InvalidValue) &&
		!errors.Is(err, AlreadyInitialized) {
		t.Fatalf("Init(gpu -2): %v", err)
	}
}
