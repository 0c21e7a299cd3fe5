package conformance

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/beamagents/beamagents/examples/devices"
)

// Config is the conformance agent's factory configuration (JSON). The zero value configures
// the devices example as it is.
type Config struct {
	// ModelID is the model id the agent's requests name; empty keeps the agent's own.
	ModelID string `json:"model_id,omitempty"`
	// MaxTokens is the activation's token budget (agent.Limits.MaxTokens); 0 means none.
	MaxTokens int64 `json:"max_tokens,omitempty"`
	// ApproveOverMilliC > 0 gates devices.dispatch behind an approval when the reading is at
	// or above it.
	ApproveOverMilliC int64 `json:"approve_over_milli_c,omitempty"`
}

// Denied is the tool message that answers a dispatch whose approval was denied.
const Denied = devices.DeniedDispatch

// Gated reports whether a dispatch for a reading of milliC needs an approval.
func (c Config) Gated(milliC int64) bool {
	return c.ApproveOverMilliC > 0 && milliC >= c.ApproveOverMilliC
}

// ParseConfig decodes a factory configuration strictly: empty is the zero Config; unknown
// members are refused.
func ParseConfig(b []byte) (Config, error) {
	var c Config
	if len(bytes.TrimSpace(b)) == 0 {
		return c, nil
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return Config{}, fmt.Errorf("conformance agent config: %w", err)
	}
	if dec.More() {
		return Config{}, fmt.Errorf("conformance agent config: data after the object")
	}
	return c, nil
}

// JSON is c's encoding, the bytes the kit passes to the factory.
func (c Config) JSON() []byte {
	b, _ := json.Marshal(c)
	return b
}
