// Package printers formats objects for kdyn: the server's Table (kubectl's
// default output), name, json, yaml, jsonl, jsonpath, gjson and
// custom-columns. Printers stream: each object is written as it arrives, so
// memory stays flat however long the list; only sorting and table column
// alignment hold rows.
package printers
