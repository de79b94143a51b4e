// SPDX-License-Identifier: MIT

package hipobjserver

import (
	"errors"
	"strings"
	"testing"
)

func TestParseToken(t *testing.T) {
	if _, err := ParseToken("junk"); !errors.Is(err, BadToken) {
		t.Fatalf("ParseToken(junk): %v, want BadToken", err)
	}
	if _, err := ParseToken(strings.Repeat("g", 88)); !errors.Is(err, BadToken) {
		t.Fatalf("ParseToken(88 non-hex): %v, want BadToken", err)
	}
	if BadToken.Error() == "" || Status(99).Error() != "?" {
		t.Fatal("status strings")
	}
}

func TestOpenWithoutDevice(t *testing.T) {
	s, err := Open(&Config{NICs: []string{"no_such_nic0"}})
	if err == nil {
		s.Close()
		t.Fatal("opened a NIC that does not exist")
	}
	if !errors.Is(err, NoDevice) {
		t.Fatalf("Open: %v, want NoDevice", err)
	}
	if _, err := Open(&Config{Depth: 1000}); !errors.Is(err, InvalidValue) &&
		!errors.Is(err, NoDevice) {
		t.Fatalf("Open(depth 1000): %v", err)
	}
}
