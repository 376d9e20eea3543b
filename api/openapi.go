package api

import (
	"encoding/json"
	"sort"
	"strings"
	"sync"

	"github.com/gofiber/fiber/v2"

	"herald/service"
)

// The OpenAPI 3.1 document of the API (decisions.md 9), built here from
// Go so that the schemas sit beside one table of operations (openapi_ops.go)
// that follows api.md resource by resource. It is built once, embedded in
// the binary, and served without keys at GET /api/openapi.json. Tests hold
// it true: every route of routes.go is in it and every operation of it is
// mounted, it is valid OpenAPI 3.1, and every answer the API tests receive
// validates against its operation's response schema.

// obj is a JSON object of the document.
type obj = map[string]any

var (
	openAPIOnce sync.Once
	openAPIJSON []byte
)

// OpenAPI returns the document as JSON.
func OpenAPI() []byte {
	openAPIOnce.Do(func() {
		b, err := json.MarshalIndent(buildOpenAPI(), "", "  ")
		if err != nil {
			panic("api: the OpenAPI document does not encode: " + err.Error())
		}
		openAPIJSON = b
	})
	return openAPIJSON
}

// serveOpenAPI answers the document (Mount puts it before the key check).
func serveOpenAPI(c *fiber.Ctx) error {
	c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSONCharsetUTF8)
	c.Set(fiber.HeaderCacheControl, "public, max-age=300")
	return c.Send(OpenAPI())
}

// ---- schema helpers ----

func str(desc string) obj { return obj{"type": "string", "description": desc} }

func strOrNull(desc string) obj { return obj{"type": []string{"string", "null"}, "description": desc} }

func integer(desc string) obj { return obj{"type": "integer", "description": desc} }

func intOrNull(desc string) obj { return obj{"type": []string{"integer", "null"}, "description": desc} }

// flag is the spec's boolean-like integer.
func flag(desc string) obj { return obj{"type": "integer", "enum": []int{0, 1}, "description": desc} }

func strings_(desc string) obj {
	return obj{"type": "array", "items": obj{"type": "string"}, "description": desc}
}

// atMost is o, an array, with its maxItems.
func atMost(n int, o obj) obj {
	o["maxItems"] = n
	return o
}

func constStr(v string) obj { return obj{"type": "string", "const": v} }

const (
	timestampPattern = `^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$`
	datetimePattern  = `^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$`
)

// timestamp is api.md's <timestamp>: ISO 8601 UTC with microseconds.
func timestamp(desc string) obj {
	return obj{"type": "string", "format": "date-time", "pattern": timestampPattern, "description": desc, "examples": []string{"2026-11-22T05:10:01.123456Z"}}
}

func timestampOrNull(desc string) obj {
	return obj{"type": []string{"string", "null"}, "pattern": timestampPattern, "description": desc}
}

// datetimeOrNull is api.md's <datetime> (YYYY-MM-DD HH:MM:SS), null when unset.
func datetimeOrNull(desc string) obj {
	return obj{"type": []string{"string", "null"}, "pattern": datetimePattern, "description": desc, "examples": []string{"2026-11-22 05:10:01"}}
}

func ref(name string) obj { return obj{"$ref": "#/components/schemas/" + name} }

func arrayOf(s obj) obj { return obj{"type": "array", "items": s} }

// record is a closed object: every property is required except those
// named optional, and no other property may appear (a schema that lies
// about an answer fails the API tests).
func record(desc string, props obj, optional ...string) obj {
	req := make([]string, 0, len(props))
	for k := range props {
		if !contains(optional, k) {
			req = append(req, k)
		}
	}
	sort.Strings(req)
	return obj{"type": "object", "description": desc, "properties": props, "required": req, "additionalProperties": false}
}

// with is props plus more (for the list forms of a record).
func with(props obj, more obj) obj {
	out := obj{}
	for k, v := range props {
		out[k] = v
	}
	for k, v := range more {
		out[k] = v
	}
	return out
}

func contains(list []string, v string) bool {
	for _, s := range list {
		if s == v {
			return true
		}
	}
	return false
}

// ---- envelopes ----

// okText is a success whose message is the given text.
func okText(text string) obj {
	return record("Success envelope.", obj{"status": constStr("success"), "message": constStr(text)})
}

// okTexts is a success envelope whose message is one of texts.
func okTexts(texts ...string) obj {
	return record("Success envelope.", obj{"status": constStr("success"), "message": obj{"type": "string", "enum": texts}})
}

// okInErrors is one of the successes api.md carries in errors.
func okInErrors(text string) obj {
	return record("Success envelope carrying its text in `errors` (as api.md documents for this operation).",
		obj{"status": constStr("success"), "errors": constStr(text)})
}

// okObject is a success whose message is an object of the given keys.
func okObject(props obj) obj {
	return record("Success envelope.", obj{"status": constStr("success"), "message": record("", props)})
}

// failedText is a failure whose errors is exactly text.
func failedText(text string) obj {
	return record("Failure envelope.", obj{"status": constStr("failed"), "errors": constStr(text)})
}

// ---- parameters and bodies ----

type param struct {
	name, desc string
	required   bool
	schema     obj
}

func q(name, desc string, schema obj) param { return param{name: name, desc: desc, schema: schema} }

func qReq(name, desc string, schema obj) param {
	return param{name: name, desc: desc, required: true, schema: schema}
}

// body is the request body of a POST: the same fields as multipart form
// data, URL-encoded form data or a JSON object (decisions.md 2).
type body struct {
	props    obj
	required []string
	// multipart: only multipart/form-data (the CSV upload).
	multipart bool
}

func fields(required []string, props obj) *body { return &body{props: props, required: required} }

var strIDsBody = fields([]string{"strIds"}, obj{
	"strIds": obj{"type": "array", "items": obj{"type": "string"}, "maxItems": service.MaxBulkIDs,
		"description": "Ids to delete (`strIds[0]`, `strIds[1]` … in a form; `strIds[]` repeated, a JSON array or one comma-separated value work too). All or nothing: if one is missing or not the caller's, nothing is deleted (NF). At most 10,000."},
})

// ---- operations ----

type op struct {
	method, path, tag, summary, desc string
	query                            []param
	body                             *body
	ok                               obj    // schema of the 200 answer (JSON)
	okCSV                            bool   // 200 answers text/csv instead
	nf                               string // the NF text, "" when the operation has none
	val                              bool   // answers 422 (VAL and other validation)
	list                             bool   // takes page, per_page, search
	public                           bool   // no keys
}

func buildOpenAPI() obj {
	paths := obj{}
	for _, o := range operations() {
		item, _ := paths[o.path].(obj)
		if item == nil {
			item = obj{}
			paths[o.path] = item
		}
		item[strings.ToLower(o.method)] = o.operation()
	}
	return obj{
		"openapi":           "3.1.0",
		"jsonSchemaDialect": "https://spec.openapis.org/oas/3.1/dialect/base",
		"info": obj{
			"title":   "Herald API",
			"version": "1.0.0",
			"summary": "The JSON API of Herald, a self-hosted bulk email marketing server.",
			"description": "Every path is relative to `{base_url}/api/`. Every answer is the JSON envelope " +
				"`{\"status\":\"success\",\"message\":…}` or `{\"status\":\"failed\",\"errors\":…}` " +
				"(a few successes carry their text in `errors`, as marked). Status codes: 200 success; 400 a body that cannot be parsed; " +
				"401 missing or wrong keys; 404 not found (NF: `Record Not Found`, or `Record not found` where marked); " +
				"405 a known path with another method; 413 a body over the limit; 414/431 a URL or headers too long; " +
				"422 validation (VAL: `errors` an object with one list of messages per field) and refused changes of state; " +
				"429 rate limited (`Retry-After`); 500 `Internal Server Error`; 503 the verification mail could not be sent.\n\n" +
				"Bodies are multipart form data, URL-encoded form data or JSON objects. Arrays are sent as `name[0]`, `name[1]` …, " +
				"`name[]` repeated, or a JSON array. Lists answer the whole collection (streamed); beyond the spec, `page` and `per_page` " +
				"(at most 1000) answer one page in id order and `search` narrows by a substring.",
			"license": obj{"name": "See the project's NOTICE"},
		},
		"servers":  []obj{{"url": "/api", "description": "This server"}},
		"security": []obj{{"PublicKey": []string{}, "SecretKey": []string{}}},
		"tags":     tags(),
		"paths":    paths,
		"components": obj{
			"securitySchemes": obj{
				"PublicKey": obj{"type": "apiKey", "in": "header", "name": "PublicKey", "description": "The account's public key (account page, or `herald account create`)."},
				"SecretKey": obj{"type": "apiKey", "in": "header", "name": "SecretKey", "description": "The account's secret key, shown once at creation and rotation."},
			},
			"schemas":   schemas(),
			"responses": responses(),
		},
	}
}

func tags() []obj {
	var out []obj
	for _, t := range [][2]string{
		{"Global unsubscribers", "Addresses that receive no mail of the account."},
		{"Unsubscribe groups", "Named lists recipients can leave on the preference page, and their recipients."},
		{"Notification recipients", "Addresses that receive the account's notifications."},
		{"Event webhooks", "Endpoints that receive the account's delivery events (decisions.md 7; beyond the spec)."},
		{"Contact types", "Groups of contacts."},
		{"Fields", "Reserved and custom contact fields."},
		{"Contacts", "Contacts, their CSV import and export."},
		{"Lookup", "Countries, states and cities."},
		{"Senders", "From identities and their verification."},
		{"Templates", "The design library and the placeholders usable in designs."},
		{"Segments", "Segments (conditions over a contact type) and their recipients."},
		{"Single sends", "One-off campaigns."},
		{"Automations", "Timed email sequences and their emails (schedules)."},
		{tForms, "Sign-up forms: their hosted page, the embeddable snippet and double opt-in (decisions.md 10; beyond the spec)."},
		{tProfile, "The company name, postal address, brand colour and logo of the account's mails and public pages (beyond the spec)."},
		{tBlocks, "Pieces of designs saved from the editor under a name (beyond the spec)."},
		{"Document", "This document."},
	} {
		out = append(out, obj{"name": t[0], "description": t[1]})
	}
	return out
}

func (o op) operation() obj {
	id := strings.ToLower(o.method) + strings.NewReplacer("/", "_", "-", "_", ".", "_").Replace(o.path)
	out := obj{"tags": []string{o.tag}, "summary": o.summary, "operationId": id}
	if o.desc != "" {
		out["description"] = o.desc
	}
	if o.public {
		out["security"] = []obj{}
	}
	params := []obj{}
	qs := o.query
	if o.list {
		qs = append(qs,
			q("page", "Beyond the spec: the page to answer (from 1) when `per_page` is given.", obj{"type": "integer", "minimum": 1}),
			q("per_page", "Beyond the spec: answer one page of this many rows (at most 1000) in id order; without it the whole collection.", obj{"type": "integer", "minimum": 1, "maximum": 1000}),
			q("search", "Beyond the spec: a case-insensitive substring of the address (or name) to narrow the list.", obj{"type": "string"}))
	}
	for _, p := range qs {
		params = append(params, obj{"name": p.name, "in": "query", "required": p.required, "description": p.desc, "schema": p.schema})
	}
	if len(params) > 0 {
		out["parameters"] = params
	}
	if o.body != nil {
		schema := obj{"type": "object", "properties": o.body.props}
		if len(o.body.required) > 0 {
			schema["required"] = o.body.required
		}
		content := obj{}
		if o.body.multipart {
			content["multipart/form-data"] = obj{"schema": schema}
		} else {
			for _, ct := range []string{"application/x-www-form-urlencoded", "multipart/form-data", "application/json"} {
				content[ct] = obj{"schema": schema}
			}
		}
		out["requestBody"] = obj{"required": len(o.body.required) > 0, "content": content}
	}
	resp := obj{}
	if o.okCSV {
		resp["200"] = obj{"description": "The file.", "content": obj{"text/csv": obj{"schema": obj{"type": "string"}}}}
	} else {
		resp["200"] = obj{"description": "Success.", "content": jsonContent(o.ok)}
	}
	if !o.public {
		resp["401"] = obj{"$ref": "#/components/responses/Unauthorized"}
	}
	if o.nf != "" {
		resp["404"] = obj{"description": "Not found (NF): `" + o.nf + "`.", "content": jsonContent(failedText(o.nf))}
	}
	if o.val {
		resp["422"] = obj{"$ref": "#/components/responses/Invalid"}
	}
	resp["default"] = obj{"$ref": "#/components/responses/Failure"}
	out["responses"] = resp
	return out
}

func jsonContent(schema obj) obj { return obj{"application/json": obj{"schema": schema}} }

func responses() obj {
	return obj{
		"Unauthorized": obj{
			"description": "Missing keys (`errors.PublicKey` / `errors.SecretKey`, each a list of one message) or wrong keys (`Invalid PublicKey or SecretKey.`), or a named API key used outside its scope (`This API key may not do that.`).",
			"content":     jsonContent(ref("Unauthorized")),
		},
		"Invalid": obj{
			"description": "Validation (VAL): `errors` holds one list of messages per field (`The <field> field is required.` …); a refused change of state carries a string.",
			"content":     jsonContent(ref("Failure")),
		},
		"Failure": obj{
			"description": "Any other failure (400, 405, 413, 429, 500, 503 …), in the failure envelope.",
			"content":     jsonContent(ref("Failure")),
		},
	}
}
