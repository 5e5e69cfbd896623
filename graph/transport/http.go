package transport

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// The media types of GraphQL over HTTP. A client that accepts the newer
// graphql-response+json learns from the status code whether its request
// ran; one that accepts only application/json gets 200 for every
// well-formed request, as the spec asks for compatibility.
const (
	mediaJSON            = "application/json"
	mediaGraphQLResponse = "application/graphql-response+json"
)

// maxRequestBytes bounds a request body: a launchRun with a subset of
// every kernel of a large trace is well under a megabyte.
const maxRequestBytes = 8 << 20

// httpTransport serves GET and POST by the GraphQL-over-HTTP spec
// (graphql.github.io/graphql-over-http): GET for queries only (405 for
// anything else), POST with application/json (415 otherwise), 400 for a
// request that is not well formed, and for a document that does not parse
// or validate: 200 with application/json, 400 with
// application/graphql-response+json; such a response has no data entry.
// Subscriptions are served by the websocket transports only.
type httpTransport struct{}

var _ graphql.Transport = httpTransport{}

// Supports takes every plain HTTP request but OPTIONS and HEAD (answered
// by transport.Options), so a wrong method gets 405, not a generic error.
func (httpTransport) Supports(r *http.Request) bool {
	return r.Header.Get("Upgrade") == "" && r.Method != http.MethodOptions && r.Method != http.MethodHead
}

// requestError is a request the server refuses before any GraphQL runs:
// its status code and what to tell the client.
type requestError struct {
	status int
	msg    string
}

func refuse(status int, format string, args ...any) *requestError {
	return &requestError{status: status, msg: fmt.Sprintf(format, args...)}
}

// Do implements [graphql.Transport].
func (httpTransport) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	ctx := r.Context()
	media, ok := responseMedia(r.Header.Get("Accept"))
	if !ok {
		media = mediaJSON
	}
	w.Header().Set("Content-Type", media+"; charset=utf-8")
	w.Header().Set("Vary", "Accept")
	fail := func(e *requestError) {
		if e.status == http.StatusMethodNotAllowed {
			// A mutation over GET may only be POSTed; another method may be either.
			allow := "GET, POST, OPTIONS"
			if r.Method == http.MethodGet {
				allow = "POST"
			}
			w.Header().Set("Allow", allow)
		}
		w.WriteHeader(e.status)
		writeResponse(w, exec.DispatchError(ctx, gqlerror.List{{Message: e.msg}}), false)
	}
	if !ok {
		fail(refuse(http.StatusNotAcceptable, "Accept: the response is %s or %s, %q takes neither", mediaGraphQLResponse, mediaJSON, r.Header.Get("Accept")))
		return
	}
	start := graphql.Now()
	var params *graphql.RawParams
	var err *requestError
	switch r.Method {
	case http.MethodGet:
		params, err = paramsFromURL(r.URL.RawQuery)
	case http.MethodPost:
		params, err = paramsFromBody(w, r)
	default:
		err = refuse(http.StatusMethodNotAllowed, "method %s: /graphql takes GET (queries) and POST", r.Method)
	}
	if err != nil {
		fail(err)
		return
	}
	params.Headers = r.Header
	params.ReadTime = graphql.TraceTiming{Start: start, End: graphql.Now()}

	opCtx, errs := exec.CreateOperationContext(ctx, params)
	if errs != nil {
		// The document did not parse or validate, or its variables do not
		// fit: a GraphQL request error, reported as the spec says.
		if status := statusOf(errs); status != 0 {
			w.WriteHeader(status)
		} else if media == mediaGraphQLResponse {
			w.WriteHeader(http.StatusBadRequest)
		}
		writeResponse(w, exec.DispatchError(graphql.WithOperationContext(ctx, opCtx), errs), false)
		return
	}
	switch op := opCtx.Operation.Operation; {
	case op == ast.Subscription:
		fail(refuse(http.StatusBadRequest, "subscriptions are served over websockets (graphql-transport-ws or graphql-ws) at this URL"))
		return
	case r.Method == http.MethodGet && op != ast.Query:
		fail(refuse(http.StatusMethodNotAllowed, "GET serves queries only: send a %s with POST", op))
		return
	}
	responses, ctx := exec.DispatchOperation(ctx, opCtx)
	writeResponse(w, responses(ctx), true)
}

// responseMedia picks the response's media type from an Accept header:
// the acceptable type with the highest quality, graphql-response+json on a
// tie. No header means application/json, as the spec says for legacy
// clients; ok is false when the header accepts neither type.
func responseMedia(accept string) (media string, ok bool) {
	if strings.TrimSpace(accept) == "" {
		return mediaJSON, true
	}
	best := -1.0
	for part := range strings.SplitSeq(accept, ",") {
		mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		q := 1.0
		if s, has := params["q"]; has {
			if q, err = strconv.ParseFloat(s, 64); err != nil {
				continue
			}
		}
		var m string
		switch mt {
		case mediaGraphQLResponse:
			m = mediaGraphQLResponse
		case mediaJSON, "application/*", "*/*":
			m = mediaJSON
		default:
			continue
		}
		if q > 0 && (q > best || q == best && m == mediaGraphQLResponse) {
			media, best = m, q
		}
	}
	return media, best > 0
}

// paramsFromURL reads a GET's query, operationName, variables and
// extensions (the last two JSON-encoded).
func paramsFromURL(rawQuery string) (*graphql.RawParams, *requestError) {
	q, err := url.ParseQuery(rawQuery)
	if err != nil {
		return nil, refuse(http.StatusBadRequest, "URL query: %v", err)
	}
	p := &graphql.RawParams{Query: q.Get("query"), OperationName: q.Get("operationName")}
	for _, f := range []struct {
		name string
		into *map[string]any
	}{{"variables", &p.Variables}, {"extensions", &p.Extensions}} {
		if s := q.Get(f.name); s != "" {
			if err := decodeJSON([]byte(s), f.into); err != nil {
				return nil, refuse(http.StatusBadRequest, "%s: want a JSON object: %v", f.name, err)
			}
		}
	}
	return p, checkParams(p)
}

// paramsFromBody reads a POST's JSON body: {"query": "...",
// "operationName": ..., "variables": {...}, "extensions": {...}}.
func paramsFromBody(w http.ResponseWriter, r *http.Request) (*graphql.RawParams, *requestError) {
	ct := r.Header.Get("Content-Type")
	mt, params, err := mime.ParseMediaType(ct)
	if err != nil || mt != mediaJSON {
		return nil, refuse(http.StatusUnsupportedMediaType, "Content-Type: want %s, got %q", mediaJSON, ct)
	}
	if cs, ok := params["charset"]; ok && !strings.EqualFold(cs, "utf-8") {
		return nil, refuse(http.StatusUnsupportedMediaType, "Content-Type: charset %q: only utf-8 is accepted", cs)
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxRequestBytes))
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		return nil, refuse(http.StatusRequestEntityTooLarge, "request body: more than %d bytes", tooBig.Limit)
	case err != nil:
		return nil, refuse(http.StatusBadRequest, "read request body: %v", err)
	case len(bytes.TrimSpace(body)) == 0:
		return nil, refuse(http.StatusBadRequest, "request body: empty; want a JSON object with a query")
	}
	var raw struct {
		Query         json.RawMessage `json:"query"`
		OperationName json.RawMessage `json:"operationName"`
		Variables     json.RawMessage `json:"variables"`
		Extensions    json.RawMessage `json:"extensions"`
	}
	if err := decodeJSON(body, &raw); err != nil {
		return nil, refuse(http.StatusBadRequest, "request body: want a JSON object: %v", err)
	}
	p := &graphql.RawParams{}
	fields := []struct {
		name string
		raw  json.RawMessage
		into any
	}{
		{"query", raw.Query, &p.Query},
		{"operationName", raw.OperationName, &p.OperationName},
		{"variables", raw.Variables, &p.Variables},
		{"extensions", raw.Extensions, &p.Extensions},
	}
	for _, f := range fields {
		if len(f.raw) == 0 || string(f.raw) == "null" {
			continue
		}
		if err := decodeJSON(f.raw, f.into); err != nil {
			want := "a JSON object"
			if _, isString := f.into.(*string); isString {
				want = "a string"
			}
			return nil, refuse(http.StatusBadRequest, "%s: want %s, got %s", f.name, want, f.raw)
		}
	}
	return p, checkParams(p)
}

// checkParams refuses a request without a query, unless it names a
// persisted query by its hash instead.
func checkParams(p *graphql.RawParams) *requestError {
	if p.Query == "" && p.Extensions["persistedQuery"] == nil {
		return refuse(http.StatusBadRequest, "query: missing; want the GraphQL document as a string")
	}
	return nil
}

// decodeJSON decodes exactly one JSON value, keeping numbers as
// json.Number, as gqlgen's scalars expect.
func decodeJSON(data []byte, into any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(into); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("data after the JSON value")
	}
	return nil
}

// responseBuffers are writeResponse's buffers; one that grew past
// maxPooledResponse for a big answer is left to the garbage collector.
var responseBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

const maxPooledResponse = 1 << 20

// writeResponse writes a GraphQL response. A request error has no data
// entry (the operation never ran); an executed one always has it, null
// when a non-null field error reached the root.
func writeResponse(w io.Writer, resp *graphql.Response, executed bool) {
	if executed && len(resp.Errors) == 0 && len(resp.Extensions) == 0 && len(resp.Data) > 0 {
		// Data alone, the usual answer (a page of kernels is some 30 kB):
		// gqlgen wrote it as compact JSON, so it goes out as it is, escaped
		// for HTML as json.Marshal escapes it, in one write from a reused
		// buffer, rather than copied and checked byte by byte again by
		// json.Marshal into a new one.
		buf := responseBuffers.Get().(*bytes.Buffer)
		buf.Reset()
		buf.WriteString(`{"data":`)
		json.HTMLEscape(buf, resp.Data)
		buf.WriteByte('}')
		w.Write(buf.Bytes())
		if buf.Cap() <= maxPooledResponse {
			responseBuffers.Put(buf)
		}
		return
	}
	out := struct {
		Errors     gqlerror.List   `json:"errors,omitempty"`
		Data       json.RawMessage `json:"data,omitempty"`
		Extensions map[string]any  `json:"extensions,omitempty"`
	}{Errors: resp.Errors, Extensions: resp.Extensions}
	if executed {
		out.Data = resp.Data
		if len(out.Data) == 0 {
			out.Data = json.RawMessage("null")
		}
	}
	b, err := json.Marshal(out)
	if err != nil {
		b, _ = json.Marshal(map[string]any{"errors": gqlerror.List{{Message: "encode the response: " + err.Error()}}})
	}
	w.Write(b)
}
