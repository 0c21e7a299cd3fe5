package devices

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"

	"github.com/beamagents/beamagents/effector/tool"
)

func init() { tool.RegisterAgentTools(Name, Tools) }

// DispatchToolArgs are devices.dispatch's arguments as the effector presents them: the
// device id as a decimal string, exact beyond 2^53.
type DispatchToolArgs struct {
	DeviceID uint64 `json:"device_id,string"`
	Reason   string `json:"reason"`
}

// Dispatch is devices.dispatch's result: the technician's ticket and arrival estimate.
type Dispatch struct {
	Ticket     string `json:"ticket"`
	DeviceID   uint64 `json:"device_id,string"`
	Site       string `json:"site"`
	ETAMinutes int    `json:"eta_minutes"`
}

// Tools are the devices agent's side-effecting tools for the effector: devices.dispatch, a
// simulated dispatch of a technician. It is deterministic in the intent (the ticket is
// derived from the intent id, so a repeated call is the same dispatch) and refuses an
// unknown device. devices.lookup is inline: the agent runs it itself.
func Tools() ([]tool.Tool, error) {
	args, err := DispatchArgs()
	if err != nil {
		return nil, err
	}
	dispatch, err := tool.Func(ToolDispatch, args, func(_ context.Context, c tool.Call, a DispatchToolArgs) (Dispatch, error) {
		d, ok := Devices[a.DeviceID]
		if !ok {
			return Dispatch{}, fmt.Errorf("no device %d", a.DeviceID)
		}
		sum := sha256.Sum256([]byte(c.IntentID))
		return Dispatch{Ticket: fmt.Sprintf("T-%04d", binary.BigEndian.Uint16(sum[:2])%10000), DeviceID: d.DeviceID, Site: d.Site,
			ETAMinutes: 20 + int(sum[2]%40)}, nil
	})
	if err != nil {
		return nil, err
	}
	return []tool.Tool{dispatch}, nil
}
