package model

// Trace attribute names of a model call (OpenTelemetry GenAI semantic conventions), in one
// place so that they can follow a shared vocabulary.
const (
	AttrOperationName     = "gen_ai.operation.name"
	AttrRequestModel      = "gen_ai.request.model"
	AttrUsageInputTokens  = "gen_ai.usage.input_tokens"
	AttrUsageOutputTokens = "gen_ai.usage.output_tokens"
	AttrResponseModel     = "gen_ai.response.model"
	AttrResponseFinish    = "gen_ai.response.finish_reasons"
	OperationChat         = "chat"
)

// RequestBytes is the size a request's budget counts: the bytes of its messages' contents
// (prompt, memory and history all reach the model as messages).
func RequestBytes(req *Request) int {
	n := 0
	for _, m := range req.Messages {
		n += len(m.Content)
	}
	return n
}
