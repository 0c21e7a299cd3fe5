package effectorrun

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	bolterrors "go.etcd.io/bbolt/errors"

	"github.com/beamagents/beamagents/console"
	"github.com/beamagents/beamagents/effector"
	"github.com/beamagents/beamagents/effector/store"
	"github.com/beamagents/beamagents/effector/tool"
	"github.com/beamagents/beamagents/intent"
	"github.com/beamagents/beamagents/internal/consoleserve"
)

// Settings are what an effector is built from (the command's flags, checked).
type Settings struct {
	Keyring     string          // keyring reference; required unless Verify is off
	Verify      intent.Mode     // signature verification
	Agents      string          // comma-separated agents whose tools run (empty: every agent with tools)
	Dedup       string          // bbolt:PATH or redis:HOST:PORT (empty: a bbolt file under the user cache directory)
	Lease       time.Duration   // how long a claim holds
	ToolTimeout time.Duration   // bound of one tool call
	Expiry      effector.Expiry // how an intent's deadline is judged
}

// Build opens the dedup store and builds the effector over the agents' registered tools.
// The caller closes the store.
func Build(s Settings) (*effector.Effector, store.Store, error) {
	var kr *intent.Keyring
	var err error
	switch {
	case s.Keyring != "":
		if kr, err = intent.LoadKeyring(s.Keyring); err != nil {
			return nil, nil, err
		}
	case s.Verify != intent.ModeOff:
		return nil, nil, fmt.Errorf("--verify %s needs --keyring (or --verify off)", s.Verify)
	}
	names := tool.AgentsWithTools()
	if s.Agents != "" {
		names = strings.Split(s.Agents, ",")
	}
	bindings, err := effector.AgentBindings(names...)
	if err != nil {
		return nil, nil, err
	}
	ref := s.Dedup
	if ref == "" {
		dir, err := os.UserCacheDir()
		if err != nil {
			return nil, nil, fmt.Errorf("no user cache directory for the default dedup store (set --dedup): %v", err)
		}
		ref = "bbolt:" + filepath.Join(dir, "beamagents", "effector.db")
	}
	st, err := store.Open(ref)
	if errors.Is(err, bolterrors.ErrTimeout) {
		return nil, nil, fmt.Errorf("--dedup: the store %s is locked by another process (another effector on the same file?); stop it, or give this one its own --dedup", ref)
	}
	if err != nil {
		return nil, nil, err
	}
	eff, err := effector.New(effector.Options{
		Keyring: kr, Verify: s.Verify, Store: st, Tools: bindings, Lease: s.Lease, ToolTimeout: s.ToolTimeout, Expiry: s.Expiry,
	})
	if err != nil {
		st.Close()
		return nil, nil, err
	}
	return eff, st, nil
}

// Console is the approval console's settings (the command's console flags).
type Console struct {
	Addr                          string // HOST:PORT to serve on
	ApproverHeader, ApproverUsers string // the approver's identity: a proxy's header, or basic-auth users (a reference)
	APITokens                     string // reference to user:token lines for the JSON API
	AllowedHosts                  string // comma-separated host names besides IP addresses and localhost
}

// ServeConsole serves eff's approval console as c says, and says where on out.
func ServeConsole(eff *effector.Effector, c Console, out io.Writer) (*http.Server, error) {
	id, err := consoleserve.Identity(c.ApproverHeader, c.ApproverUsers)
	if err != nil {
		return nil, err
	}
	var tokens map[string]string // token → user
	if c.APITokens != "" {
		byUser, err := consoleserve.LoadPairs("api_tokens", c.APITokens, "user:token")
		if err != nil {
			return nil, err
		}
		tokens = map[string]string{}
		for user, token := range byUser {
			tokens[token] = user
		}
	}
	h, err := console.New(console.Options{Approvals: eff.Approvals(), Identity: id, ReadNeedsIdentity: true, Hosts: consoleserve.HostList(c.AllowedHosts), Tokens: tokens})
	if err != nil {
		return nil, fmt.Errorf("--console needs --approver_header or --approver_users: %w", err)
	}
	l, err := net.Listen("tcp", c.Addr)
	if err != nil {
		return nil, err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(l)
	fmt.Fprintf(out, "approval console on http://%s/approvals\n", l.Addr())
	return srv, nil
}
