package devloop

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// Call POSTs body as JSON to path on the dev server (or console JSON API) at base, with the
// bearer token, and decodes a 2xx answer into out. A refusal is returned as its stable code
// and detail.
func Call(base, token, path string, body, out any) error {
	b, _ := json.Marshal(body)
	req, err := http.NewRequest(http.MethodPost, base+strings.TrimPrefix(path, "/"), bytes.NewReader(b))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := (&http.Client{Timeout: time.Minute}).Do(req)
	if err != nil {
		return fmt.Errorf("the dev server does not answer: %v", err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode/100 != 2 {
		var ae struct {
			Error struct{ Code, Detail string } `json:"error"`
		}
		if json.Unmarshal(data, &ae) == nil && ae.Error.Code != "" {
			return fmt.Errorf("%s (HTTP %d): %s", ae.Error.Code, resp.StatusCode, ae.Error.Detail)
		}
		return fmt.Errorf("HTTP %d from the dev server", resp.StatusCode)
	}
	return json.Unmarshal(data, out)
}
