package servertests_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cascade-sim/cascade/testkit/servertest"
)

// introType is a type reference of the introspection query, four
// wrappers deep (enough for [X!]!).
type introType struct {
	Kind   string     `json:"kind"`
	Name   *string    `json:"name"`
	OfType *introType `json:"ofType"`
}

const introTypeRef = `kind name ofType { kind name ofType { kind name ofType { kind name } } }`

type introInput struct {
	Name         string    `json:"name"`
	Type         introType `json:"type"`
	DefaultValue *string   `json:"defaultValue"`
}

type introSchema struct {
	Schema struct {
		MutationType struct {
			Fields []struct {
				Name string       `json:"name"`
				Args []introInput `json:"args"`
				Type introType    `json:"type"`
			} `json:"fields"`
		} `json:"mutationType"`
		Types []struct {
			Kind        string                  `json:"kind"`
			Name        string                  `json:"name"`
			EnumValues  []struct{ Name string } `json:"enumValues"`
			InputFields []introInput            `json:"inputFields"`
		} `json:"types"`
	} `json:"__schema"`
}

// TestEveryMutationNeedsTheReadWriteToken lists the schema's mutations by
// introspection and sends each, with arguments made up from their types,
// with the read-only token over HTTP and over a websocket: every one must
// be refused FORBIDDEN. The same document with the read-write token must
// pass validation and access (whatever it then answers: NOT_FOUND for
// the made-up ids), so a refusal is the token's and not a malformed
// document's. A mutation added to the schema is covered without editing
// this test.
func TestEveryMutationNeedsTheReadWriteToken(t *testing.T) {
	t.Parallel()
	s := servertest.Server(t, withTokens)
	r := s.Post(t, rwToken, `{ __schema {
		mutationType { fields { name args { name defaultValue type { `+introTypeRef+` } } type { `+introTypeRef+` } } }
		types { kind name enumValues { name } inputFields { name defaultValue type { `+introTypeRef+` } } }
	} }`, nil)
	if r.Status != 200 || len(r.Errors) > 0 {
		t.Fatalf("introspection: %d %+v", r.Status, r.Errors)
	}
	var sc introSchema
	if err := json.Unmarshal(r.Data, &sc); err != nil {
		t.Fatal(err)
	}
	types := map[string]int{}
	for i, ty := range sc.Schema.Types {
		types[ty.Name] = i
	}
	// value writes a GraphQL literal of type ty.
	var value func(ty introType) string
	value = func(ty introType) string {
		switch ty.Kind {
		case "NON_NULL":
			return value(*ty.OfType)
		case "LIST":
			return "[" + value(*ty.OfType) + "]"
		}
		name := *ty.Name
		switch name {
		case "ID", "String":
			return `"no-such-` + strings.ToLower(name) + `"`
		case "Int", "Int64":
			return "1"
		case "Float":
			return "1.5"
		case "Boolean":
			return "false"
		case "Time":
			return `"2026-01-02T03:04:05Z"`
		}
		def := sc.Schema.Types[types[name]]
		switch def.Kind {
		case "ENUM":
			return def.EnumValues[0].Name
		case "INPUT_OBJECT":
			var fields []string
			for _, f := range def.InputFields {
				fields = append(fields, f.Name+": "+value(f.Type))
			}
			return "{" + strings.Join(fields, ", ") + "}"
		}
		t.Fatalf("no made-up value for %s %s: teach this test the new scalar", def.Kind, name)
		return ""
	}
	named := func(ty introType) introType {
		for ty.OfType != nil {
			ty = *ty.OfType
		}
		return ty
	}

	fields := sc.Schema.MutationType.Fields
	if len(fields) == 0 {
		t.Fatal("introspection lists no mutation")
	}
	var names []string
	for _, f := range fields {
		names = append(names, f.Name)
		var args []string
		for _, a := range f.Args {
			args = append(args, a.Name+": "+value(a.Type))
		}
		doc := "mutation { " + f.Name
		if len(args) > 0 {
			doc += "(" + strings.Join(args, ", ") + ")"
		}
		switch named(f.Type).Kind {
		case "OBJECT", "INTERFACE", "UNION":
			doc += " { __typename }"
		}
		doc += " }"
		t.Run(f.Name, func(t *testing.T) {
			ro := s.Post(t, roToken, doc, nil)
			if ro.Status != 403 || len(ro.Errors) != 1 || ro.Errors[0].Code() != "FORBIDDEN" {
				t.Errorf("read-only over HTTP: %d %+v, want 403 FORBIDDEN (%s)", ro.Status, ro.Errors, doc)
			}
			if len(ro.Data) > 0 && string(ro.Data) != "null" {
				t.Errorf("read-only over HTTP: data %s", ro.Data)
			}
			rw := s.Post(t, rwToken, doc, nil)
			for _, e := range rw.Errors {
				if c := e.Code(); c == "FORBIDDEN" || c == "UNAUTHENTICATED" || strings.HasPrefix(c, "GRAPHQL_") {
					t.Errorf("read-write: %s %s: the document is not a fair test (%s)", c, e.Message, doc)
				}
			}

			conn, err := s.DialWS(t, "graphql-transport-ws", map[string]any{"authorization": "Bearer " + roToken})
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			sub := servertest.SubscribeOn(t, conn, "graphql-transport-ws", doc, nil)
			if err := sub.Next(10*time.Second, &struct{}{}); err == nil || !strings.Contains(err.Error(), "FORBIDDEN") {
				t.Errorf("read-only over a websocket: want FORBIDDEN, got %v", err)
			}
		})
	}
	slices.Sort(names)
	t.Logf("%d mutations refused to the read-only token: %s", len(names), fmt.Sprint(names))
}
