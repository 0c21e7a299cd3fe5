package devloop

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/beamagents/beamagents/records"
)

// DefaultStateDir is dev's state directory for agentName under the user cache directory.
func DefaultStateDir(agentName string) (string, error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no user cache directory for dev's state (set --state_dir): %v", err)
	}
	return filepath.Join(cache, "beamagents", "dev", agentName), nil
}

// KeyringRef is the keyring dev signs and verifies with when none is given: one made at the
// first start in the state directory dir (keyring.json, 0600) and kept, so the intents of
// suspended keys still verify after a restart. It returns its reference (file:PATH).
func KeyringRef(dir string) (string, error) {
	path := filepath.Join(dir, "keyring.json")
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		secret := make([]byte, 32)
		if _, err := rand.Read(secret); err != nil {
			return "", err
		}
		doc := fmt.Sprintf(`{"active":"dev","keys":[{"id":"dev","secret":%q}]}`, base64.StdEncoding.EncodeToString(secret))
		tmp := path + ".tmp"
		if err := os.WriteFile(tmp, []byte(doc), 0o600); err != nil {
			return "", err
		}
		if err := os.Rename(tmp, path); err != nil {
			return "", err
		}
	}
	return "file:" + path, nil
}

// MemoryStoreRef is the long-term memory store dev uses when none is given: a SQLite file in
// the state directory dir (memory.db), kept across restarts like the keys' state.
func MemoryStoreRef(dir string) string {
	return "sqlite:" + filepath.Join(dir, "memory.db")
}

// Server is what another process reads to reach a running dev: its console's URL and the
// bearer token of its JSON API.
type Server struct {
	URL   string `json:"url"`
	Token string `json:"token"`
}

// ServerFile is the file in the state directory that holds a running dev's Server (0600,
// removed when dev stops).
const ServerFile = "server.json"

func writeServer(dir string, s Server) error {
	b, _ := json.Marshal(s)
	tmp := filepath.Join(dir, ServerFile+".tmp")
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(dir, ServerFile))
}

// ReadServer is the dev running with state directory dir, from its server.json.
func ReadServer(dir string) (Server, error) {
	var s Server
	b, err := records.ReadCapped(filepath.Join(dir, ServerFile), 64<<10)
	if errors.Is(err, os.ErrNotExist) {
		return s, fmt.Errorf("no beamagents dev is running with state directory %s (no %s): start `beamagents dev` first", dir, ServerFile)
	}
	if err != nil {
		return s, err
	}
	if err := json.Unmarshal(b, &s); err != nil || s.URL == "" || s.Token == "" {
		return Server{}, fmt.Errorf("%s in %s does not name a dev server", ServerFile, dir)
	}
	return s, nil
}

// RandomHex is n random bytes in hex: tokens, passwords and envelope ids.
func RandomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}
