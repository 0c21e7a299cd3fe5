package consoleserve

import (
	"bufio"
	"fmt"
	"os"
	"strings"

	"github.com/beamagents/beamagents/console"
	"github.com/beamagents/beamagents/records"
)

// maxCredentialBytes caps a credentials file, as the commands cap every small file argument.
const maxCredentialBytes = 16 << 20

// Identity is the acting user's identity source from the approver flags: a header set by an
// authenticating proxy, or basic-auth users read from usersRef.
func Identity(header, usersRef string) (console.Identity, error) {
	id := console.Identity{ApproverHeader: header}
	if usersRef != "" {
		if header != "" {
			return id, fmt.Errorf("--approver_header and --approver_users: choose one")
		}
		users, err := LoadPairs("approver_users", usersRef, "user:password")
		if err != nil {
			return id, err
		}
		id.BasicAuth = users
	}
	return id, nil
}

// LoadPairs reads the lines of form ("user:SECRET") from reference ref (env:VAR or
// file:PATH) of flag name: user → secret. Blank lines and # comments are skipped.
func LoadPairs(name, ref, form string) (map[string]string, error) {
	kind, arg, _ := strings.Cut(ref, ":")
	var data string
	switch kind {
	case "env":
		data = os.Getenv(arg)
	case "file":
		b, err := records.ReadCapped(arg, maxCredentialBytes)
		if err != nil {
			return nil, err
		}
		data = string(b)
	default:
		return nil, fmt.Errorf("--%s: the value is not env:VAR or file:PATH; did you paste the secrets themselves?", name)
	}
	users := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(data))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		u, p, ok := strings.Cut(line, ":")
		if !ok || u == "" || p == "" {
			return nil, fmt.Errorf("--%s: a line is not %s", name, form)
		}
		users[u] = p
	}
	if len(users) == 0 {
		return nil, fmt.Errorf("--%s: the reference holds no users", name)
	}
	return users, nil
}
