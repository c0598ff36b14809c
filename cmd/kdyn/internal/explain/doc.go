// Package explain holds "kdyn explain": the documentation of a resource
// type and its fields, from the server's OpenAPI v3 document for the
// type's group-version, for built-in types, CRDs with a schema and
// aggregated APIs alike.
//
// The type is resolved as get resolves it; the fields follow it, separated
// by dots, looked through arrays, maps and allOf. It costs one request for
// the OpenAPI v3 index and, unless the document is in the disk cache under
// the hash the index names, one for the document. A field that does not
// exist is an error naming it; --recursive prints the whole field tree
// with types.
package explain
