package kubeconfig

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strconv"
	"strings"

	"sigs.k8s.io/yaml"
)

// Kinds of named kubeconfig entries, as the file's lists name them.
const (
	ClustersList = "clusters"
	UsersList    = "users"
	ContextsList = "contexts"
)

// entryKey is the key of an entry's body in its list item: "cluster" in
// clusters, "user" in users, "context" in contexts.
var entryKey = map[string]string{ClustersList: "cluster", UsersList: "user", ContextsList: "context"}

// Editor changes kubeconfig files the way "kubectl config set-*",
// "set", "unset", "delete-*" and "rename-context" do: an entry that exists
// is changed in the file that defines it (the first in precedence order),
// a new one goes to the file new entries go to (DefaultFile), and every
// other field and entry of the files is kept as it is. Nothing is written
// until Save.
type Editor struct {
	rules   *LoadingRules
	files   []string                  // precedence order
	docs    map[string]map[string]any // path → parsed file
	changed map[string]bool
}

// NewEditor reads the files rules name (missing ones are empty). A nil
// rules means NewDefaultLoadingRules.
func NewEditor(rules *LoadingRules) (*Editor, error) {
	if rules == nil {
		rules = NewDefaultLoadingRules()
	}
	e := &Editor{rules: rules, docs: map[string]map[string]any{}, changed: map[string]bool{}}
	if rules.ExplicitPath != "" {
		e.files = []string{rules.ExplicitPath}
	} else {
		for _, p := range rules.Precedence {
			if p != "" && !slices.Contains(e.files, p) {
				e.files = append(e.files, p)
			}
		}
	}
	if len(e.files) == 0 {
		return nil, errors.New("kubeconfig: no kubeconfig file to edit: set --kubeconfig or $KUBECONFIG, or make the home directory known")
	}
	for _, p := range e.files {
		data, err := os.ReadFile(p)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("kubeconfig: %w", err)
		}
		doc, err := genericDoc(data)
		if err != nil {
			return nil, fmt.Errorf("kubeconfig: %s: %w", p, err)
		}
		e.docs[p] = doc
	}
	return e, nil
}

// DefaultFile is the file new entries go to, as kubectl chooses it: the
// explicit file, else the only file, else the first that exists, else the
// last listed.
func (e *Editor) DefaultFile() string {
	if len(e.files) == 1 {
		return e.files[0]
	}
	for _, p := range e.files {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return e.files[len(e.files)-1]
}

// items returns the list of kind in doc.
func items(doc map[string]any, kind string) []any {
	l, _ := doc[kind].([]any)
	return l
}

// find returns the file and index of the entry of kind named name.
func (e *Editor) find(kind, name string) (string, int) {
	for _, p := range e.files {
		for i, it := range items(e.docs[p], kind) {
			if m, ok := it.(map[string]any); ok && m["name"] == name {
				return p, i
			}
		}
	}
	return "", -1
}

// Has reports whether an entry of kind (ClustersList, UsersList,
// ContextsList) is named name.
func (e *Editor) Has(kind, name string) bool {
	_, i := e.find(kind, name)
	return i >= 0
}

// Names returns the names of the entries of kind, in file order.
func (e *Editor) Names(kind string) []string {
	var out []string
	for _, p := range e.files {
		for _, it := range items(e.docs[p], kind) {
			if m, ok := it.(map[string]any); ok {
				if n, ok := m["name"].(string); ok && !slices.Contains(out, n) {
					out = append(out, n)
				}
			}
		}
	}
	return out
}

// Entry returns the body of the entry of kind named name for changing it
// (the "cluster", "user" or "context" mapping), creating the entry in
// DefaultFile when there is none; created reports that.
func (e *Editor) Entry(kind, name string) (body map[string]any, created bool) {
	key := entryKey[kind]
	p, i := e.find(kind, name)
	if i < 0 {
		p = e.DefaultFile()
		body = map[string]any{}
		e.docs[p][kind] = append(items(e.docs[p], kind), map[string]any{"name": name, key: body})
		e.changed[p] = true
		return body, true
	}
	item := items(e.docs[p], kind)[i].(map[string]any)
	body, ok := item[key].(map[string]any)
	if !ok {
		body = map[string]any{}
		item[key] = body
	}
	e.changed[p] = true
	return body, false
}

// Delete removes the entry of kind named name and returns the file it
// was in, or false when there is none.
func (e *Editor) Delete(kind, name string) (string, bool) {
	p, i := e.find(kind, name)
	if i < 0 {
		return "", false
	}
	l := items(e.docs[p], kind)
	e.docs[p][kind] = slices.Delete(slices.Clone(l), i, i+1)
	e.changed[p] = true
	return p, true
}

// RenameContext renames a context, and the current context with it when
// it is the one renamed. The new name must be free.
func (e *Editor) RenameContext(from, to string) error {
	p, i := e.find(ContextsList, from)
	if i < 0 {
		return &NotFoundError{Kind: "context", Name: from, Available: e.Names(ContextsList)}
	}
	if e.Has(ContextsList, to) {
		return fmt.Errorf("cannot rename the context %q, the context %q already exists in %s", from, to, p)
	}
	items(e.docs[p], ContextsList)[i].(map[string]any)["name"] = to
	e.changed[p] = true
	if e.CurrentContext() == from {
		e.SetCurrentContext(to)
	}
	return nil
}

// CurrentContext returns the current-context of the files (the first
// file that sets one).
func (e *Editor) CurrentContext() string {
	for _, p := range e.files {
		if c, ok := e.docs[p]["current-context"].(string); ok && c != "" {
			return c
		}
	}
	return ""
}

// SetCurrentContext sets current-context in the file whose
// current-context is in effect, else in DefaultFile; "" unsets it.
func (e *Editor) SetCurrentContext(name string) {
	p := e.DefaultFile()
	for _, f := range e.files {
		if c, ok := e.docs[f]["current-context"].(string); ok && c != "" {
			p = f
			break
		}
	}
	if name == "" {
		delete(e.docs[p], "current-context")
	} else {
		e.docs[p]["current-context"] = name
	}
	e.changed[p] = true
}

// Save writes the files that changed, each as a whole kubeconfig (kind
// Config, apiVersion v1), with 0600 permissions for new files.
func (e *Editor) Save() error {
	for _, p := range e.files {
		if !e.changed[p] {
			continue
		}
		doc := e.docs[p]
		if _, ok := doc["apiVersion"]; !ok {
			doc["apiVersion"] = "v1"
		}
		if _, ok := doc["kind"]; !ok {
			doc["kind"] = "Config"
		}
		for _, k := range []string{ClustersList, UsersList, ContextsList} {
			if _, ok := doc[k]; !ok {
				doc[k] = nil
			}
		}
		if _, ok := doc["preferences"]; !ok {
			doc["preferences"] = map[string]any{}
		}
		if _, ok := doc["current-context"]; !ok {
			doc["current-context"] = ""
		}
		data, err := marshalDoc(doc)
		if err != nil {
			return fmt.Errorf("kubeconfig: %s: %w", p, err)
		}
		if err := writeFile(p, data); err != nil {
			return err
		}
		e.changed[p] = false
	}
	return nil
}

// Property kinds of the fields "kubectl config set" may change.
const (
	propString = iota
	propBool
	propBytes
	propList
)

// properties are the fields of each entry that Set and Unset know, with
// their kinds (kubectl's names).
var properties = map[string]map[string]int{
	ClustersList: {
		"server": propString, "tls-server-name": propString, "insecure-skip-tls-verify": propBool,
		"certificate-authority": propString, "certificate-authority-data": propBytes,
		"proxy-url": propString, "disable-compression": propBool,
	},
	UsersList: {
		"client-certificate": propString, "client-certificate-data": propBytes,
		"client-key": propString, "client-key-data": propBytes,
		"token": propString, "tokenFile": propString,
		"as": propString, "as-uid": propString, "as-groups": propList,
		"username": propString, "password": propString,
	},
	ContextsList: {"cluster": propString, "user": propString, "namespace": propString},
}

// Set sets the property at path (kubectl's dotted names:
// "clusters.NAME.server", "users.NAME.token", "contexts.NAME.namespace",
// "current-context") to value. A bytes field takes base64 unless rawBytes,
// when value is the bytes themselves; a bool field takes true or false.
func (e *Editor) Set(path, value string, rawBytes bool) error {
	if path == "current-context" {
		e.SetCurrentContext(value)
		return nil
	}
	kind, name, field, err := splitProperty(path)
	if err != nil {
		return err
	}
	var v any = value
	switch properties[kind][field] {
	case propBool:
		b, err := strconv.ParseBool(value)
		if err != nil {
			return fmt.Errorf("%s: %q is not a boolean (true or false)", path, value)
		}
		v = b
	case propBytes:
		if rawBytes {
			v = base64.StdEncoding.EncodeToString([]byte(value))
		} else if _, err := base64.StdEncoding.DecodeString(value); err != nil {
			return fmt.Errorf("%s: the value is not base64 (use --set-raw-bytes to give the bytes themselves): %w", path, err)
		}
	case propList:
		v = []any{value}
	}
	body, _ := e.Entry(kind, name)
	body[field] = v
	return nil
}

// Unset removes the property at path (see Set); a path of two parts
// ("contexts.NAME") removes the whole entry. It is an error when there is
// nothing at path.
func (e *Editor) Unset(path string) error {
	if path == "current-context" {
		e.SetCurrentContext("")
		return nil
	}
	parts := strings.SplitN(path, ".", 3)
	if len(parts) == 2 && entryKey[parts[0]] != "" {
		if _, ok := e.Delete(parts[0], parts[1]); !ok {
			return fmt.Errorf("current map key `%s` is invalid", parts[1])
		}
		return nil
	}
	kind, name, field, err := splitProperty(path)
	if err != nil {
		return err
	}
	p, i := e.find(kind, name)
	if i < 0 {
		return fmt.Errorf("current map key `%s` is invalid", name)
	}
	body, _ := items(e.docs[p], kind)[i].(map[string]any)[entryKey[kind]].(map[string]any)
	if _, ok := body[field]; !ok {
		return fmt.Errorf("unable to locate path %s", path)
	}
	delete(body, field)
	e.changed[p] = true
	return nil
}

// splitProperty splits "clusters.NAME.FIELD" and checks that FIELD is one
// Set knows.
func splitProperty(path string) (kind, name, field string, err error) {
	parts := strings.Split(path, ".")
	if len(parts) < 3 || entryKey[parts[0]] == "" {
		return "", "", "", fmt.Errorf("unable to locate path %s: use clusters.NAME.FIELD, users.NAME.FIELD, contexts.NAME.FIELD or current-context", path)
	}
	kind, field = parts[0], parts[len(parts)-1]
	name = strings.Join(parts[1:len(parts)-1], ".")
	if _, ok := properties[kind][field]; !ok {
		known := make([]string, 0, len(properties[kind]))
		for k := range properties[kind] {
			known = append(known, k)
		}
		slices.Sort(known)
		return "", "", "", fmt.Errorf("unable to locate path %s: %s entries have no field %q (known: %s)", path, entryKey[kind], field, strings.Join(known, ", "))
	}
	return kind, name, field, nil
}

// marshalDoc writes a parsed kubeconfig back as YAML, keys in order.
func marshalDoc(doc map[string]any) ([]byte, error) {
	j, err := json.Marshal(doc)
	if err != nil {
		return nil, err
	}
	return yaml.JSONToYAML(j)
}
