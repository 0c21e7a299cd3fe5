package agent

import (
	pb "github.com/beamagents/beamagents/gen/beam_agents/v1"
	"github.com/beamagents/beamagents/model"
)

// ToolMessage is the conversation's message that answers the tool call callID with content:
// the one spelling of a tool message, for handlers and framework adapters alike.
func ToolMessage(callID, content string) model.Message {
	return model.Message{Role: model.RoleTool, Content: content, ToolCallID: callID}
}

// resultContent renders a tool result for the model: its payload when OK, else its status and
// error message (for example "ERROR: no such order").
func resultContent(r *pb.ToolResult) string {
	if r.GetStatus() == pb.ToolResult_OK {
		return string(r.GetPayload())
	}
	return r.GetStatus().String() + ": " + r.GetErrorMessage()
}
