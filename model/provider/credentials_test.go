package provider_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/beamagents/beamagents/model"
	"github.com/beamagents/beamagents/model/provider"
)

func TestLoadKey(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "key")
	os.WriteFile(good, []byte(testKey+"\n"), 0o600)
	empty := filepath.Join(dir, "empty")
	os.WriteFile(empty, nil, 0o600)
	t.Setenv("BEAMAGENTS_TEST_KEY", testKey)
	for _, tc := range []struct {
		ref, want string
		ok        bool
	}{
		{"", "", true},
		{"env:BEAMAGENTS_TEST_KEY", testKey, true},
		{"file:" + good, testKey, true},
		{"env:BEAMAGENTS_SURELY_UNSET", "", false},
		{"file:" + filepath.Join(dir, "missing"), "", false},
		{"file:" + empty, "", false},
		{testKey, "", false}, // a key given by value is refused, not used
		{"vault:secret/key", "", false},
	} {
		got, err := provider.LoadKey(tc.ref)
		if got != tc.want || (err == nil) != tc.ok {
			t.Errorf("%q: %q %v", tc.ref, got, err)
		}
		if err != nil && (!errors.Is(err, model.ErrCredentials) || strings.Contains(err.Error(), testKey)) {
			t.Errorf("%q: error %v", tc.ref, err)
		}
	}
	c := provider.Config{APIKey: "env:BEAMAGENTS_TEST_KEY"}
	if s := c.String(); strings.Contains(s, testKey) {
		t.Fatalf("Config renders the key: %s", s)
	}
}
