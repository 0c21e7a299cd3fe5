package consoleserve_test

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/beamagents/beamagents/internal/consoleserve"
)

func TestLoadPairs(t *testing.T) {
	file := filepath.Join(t.TempDir(), "users")
	if err := os.WriteFile(file, []byte("# approvers\nann:pw1\n\nbob:pw:2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("CONSOLESERVE_USERS", "eve:s3cr3t-val")
	t.Setenv("CONSOLESERVE_BAD", "eve")
	for _, tc := range []struct {
		name, ref string
		want      map[string]string
		err       string
	}{
		{"file", "file:" + file, map[string]string{"ann": "pw1", "bob": "pw:2"}, ""},
		{"env", "env:CONSOLESERVE_USERS", map[string]string{"eve": "s3cr3t-val"}, ""},
		{"not a reference", "ann:pw1", nil, "not env:VAR or file:PATH"},
		{"not a pair", "env:CONSOLESERVE_BAD", nil, "a line is not user:password"},
		{"empty", "env:CONSOLESERVE_UNSET", nil, "holds no users"},
		{"missing file", "file:" + file + ".none", nil, "no such file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := consoleserve.LoadPairs("approver_users", tc.ref, "user:password")
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				if strings.Contains(err.Error(), "pw1") || strings.Contains(err.Error(), "s3cr3t") {
					t.Fatalf("the error carries a secret: %v", err)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %v, %v; want %v", got, err, tc.want)
			}
		})
	}
}

func TestIdentity(t *testing.T) {
	t.Setenv("CONSOLESERVE_USERS", "ann:pw")
	if id, err := consoleserve.Identity("X-User", ""); err != nil || id.ApproverHeader != "X-User" {
		t.Fatalf("header: %+v, %v", id, err)
	}
	if id, err := consoleserve.Identity("", "env:CONSOLESERVE_USERS"); err != nil || id.BasicAuth["ann"] != "pw" {
		t.Fatalf("users: %+v, %v", id, err)
	}
	if _, err := consoleserve.Identity("X-User", "env:CONSOLESERVE_USERS"); err == nil {
		t.Fatal("both accepted")
	}
}

func TestHostsAndLoopback(t *testing.T) {
	if got := consoleserve.HostList(" a.example, ,b.example:8443,"); !reflect.DeepEqual(got, []string{"a.example", "b.example:8443"}) {
		t.Errorf("HostList = %q", got)
	}
	for addr, want := range map[string]bool{
		"127.0.0.1:8089": true, "localhost:80": true, "[::1]:0": true,
		"0.0.0.0:8089": false, ":8089": false, "example.com:80": false, "127.0.0.1": false,
	} {
		if got := consoleserve.Loopback(addr); got != want {
			t.Errorf("Loopback(%q) = %v, want %v", addr, got, want)
		}
	}
}
