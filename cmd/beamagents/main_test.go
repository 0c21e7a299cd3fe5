package main

import (
	"bytes"
	"errors"
	"os/exec"
	"strings"
	"testing"
)

// The built binary prints its usage and nothing else, with no arguments (on stderr, status
// 2) and with help (on stdout, status 0): no Beam registration warning or other log line
// from the packages it links.
func TestUsageOnly(t *testing.T) {
	bin := binary(t)
	for _, tc := range []struct {
		name   string
		args   []string
		status int
	}{
		{"no arguments", nil, 2},
		{"help", []string{"help"}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			cmd := exec.Command(bin, tc.args...)
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			status := 0
			var exit *exec.ExitError
			if err := cmd.Run(); errors.As(err, &exit) {
				status = exit.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if status != tc.status {
				t.Fatalf("status %d, want %d", status, tc.status)
			}
			usage, other := stderr.String(), stdout.String()
			if tc.status == 0 {
				usage, other = other, usage
			}
			if other != "" {
				t.Errorf("the other stream is not empty:\n%s", other)
			}
			if !strings.HasPrefix(usage, "usage: beamagents <command>") {
				t.Errorf("the output does not open with the usage:\n%s", usage)
			}
			for _, l := range strings.Split(usage, "\n") {
				if strings.Contains(l, "WARN") || strings.Contains(l, "Overwriting") {
					t.Errorf("a log line: %q", l)
				}
			}
		})
	}
}
