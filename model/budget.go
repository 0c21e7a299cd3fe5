package model

// RequestBytes is the size a request's budget counts: the bytes of its messages' contents
// (prompt, memory and history all reach the model as messages).
func RequestBytes(req *Request) int {
	n := 0
	for _, m := range req.Messages {
		n += len(m.Content)
	}
	return n
}
