package provider

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/beamagents/beamagents/model"
)

// MaxWireName is the longest tool name the providers accept: OpenAI's function names and
// Anthropic's tool names both match ^[a-zA-Z0-9_-]{1,64}$.
const MaxWireName = 64

// unknownMark starts the name an answer's tool call is handed back with when the model named
// a declared tool by its declared name instead of its wire name. No declared name holds a
// control character (CheckToolName), so the marked name can never be admitted.
const unknownMark = "\x00"

// hashedKeep is how much of a long wire name is kept before its hashed suffix: 55 bytes, '_'
// and 8 hex digits make MaxWireName.
const hashedKeep = MaxWireName - 1 - 8

// WireName is the name a declared tool is sent under: every character outside
// [A-Za-z0-9_-] becomes '_' (one '_' per character, or per byte of invalid UTF-8), and a
// result longer than MaxWireName keeps its first 55 bytes followed by '_' and the first 8 hex
// digits of the SHA-256 of the declared name. A name already in the alphabet and within the
// bound is its own wire name. WireName is deterministic, so a request's bytes are the same on
// every attempt, worker and replay; it is not injective, which is why ToolNames refuses a set
// of declared names two of which share a wire name.
func WireName(declared string) string {
	var b strings.Builder
	b.Grow(len(declared))
	for _, r := range declared {
		if wireRune(r) {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	w := b.String()
	if len(w) <= MaxWireName {
		return w
	}
	sum := sha256.Sum256([]byte(declared))
	return w[:hashedKeep] + "_" + hex.EncodeToString(sum[:4])
}

func wireRune(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-'
}

// ValidWireName reports whether name matches ^[a-zA-Z0-9_-]{1,64}$, the pattern both
// providers require of a tool name.
func ValidWireName(name string) bool {
	if name == "" || len(name) > MaxWireName {
		return false
	}
	for i := 0; i < len(name); i++ {
		if !wireRune(rune(name[i])) {
			return false
		}
	}
	return true
}

// CheckToolName refuses a declared tool name no provider can be sent: an empty one, or one
// holding invalid UTF-8 or a control character (such a name is reserved for the names of
// answers that name no declared tool). The error is a *model.Error of CodeToolName.
func CheckToolName(declared string) error {
	switch {
	case declared == "":
		return toolNameErr("a tool has an empty name")
	case !utf8.ValidString(declared):
		return toolNameErr(fmt.Sprintf("tool name %q is not UTF-8", declared))
	case strings.IndexFunc(declared, unicode.IsControl) >= 0:
		return toolNameErr(fmt.Sprintf("tool name %q holds a control character", declared))
	}
	return nil
}

func toolNameErr(detail string) error {
	return &model.Error{Code: model.CodeToolName, Detail: detail}
}

// ToolNames maps a request's declared tool names to their wire names and back. The zero value
// is not usable; build one with NewToolNames.
type ToolNames struct {
	wire     map[string]string // declared → wire
	declared map[string]string // wire → declared
}

// NewToolNames checks a set of declared tool names and returns its mapping: each name must
// pass CheckToolName, appear once, and have a wire name (WireName) no other name of the set
// has. Any failure is a *model.Error of CodeToolName naming the names involved.
func NewToolNames(declared []string) (*ToolNames, error) {
	t := &ToolNames{wire: make(map[string]string, len(declared)), declared: make(map[string]string, len(declared))}
	for _, d := range declared {
		if err := CheckToolName(d); err != nil {
			return nil, err
		}
		if _, dup := t.wire[d]; dup {
			return nil, toolNameErr(fmt.Sprintf("tool %q is declared twice", d))
		}
		w := WireName(d)
		if other, clash := t.declared[w]; clash {
			return nil, toolNameErr(fmt.Sprintf("tools %q and %q are both sent as %q: rename one (characters outside [A-Za-z0-9_-] are sent as '_')", other, d, w))
		}
		t.wire[d], t.declared[w] = w, d
	}
	return t, nil
}

// Wire is the name declared is sent under. A name outside the set (a call of the conversation
// to a tool this request does not declare) is sent as its WireName.
func (t *ToolNames) Wire(declared string) string {
	if w, ok := t.wire[declared]; ok {
		return w
	}
	return WireName(declared)
}

// Declared is the declared name of a name an answer's tool call carries. A wire name of the
// set maps back to its declared name. Any other name names no declared tool and must stay
// refused: it is handed back as sent, unless it equals a declared name (a model that answered
// with the declared name instead of the one it was sent), which comes back marked with a
// leading NUL, a name no declared tool can have; so an unknown name is never admitted.
func (t *ToolNames) Declared(wire string) string {
	if d, ok := t.declared[wire]; ok {
		return d
	}
	if _, ok := t.wire[wire]; ok {
		return unknownMark + wire
	}
	return wire
}

// RequestToolNames is the mapping of req's declared tools (Request.Tools).
func RequestToolNames(req *model.Request) (*ToolNames, error) {
	names := make([]string, len(req.Tools))
	for i, tl := range req.Tools {
		names[i] = tl.Name
	}
	return NewToolNames(names)
}
