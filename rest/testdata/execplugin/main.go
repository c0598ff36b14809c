// Command execplugin is a fake exec credential plugin for rest's tests.
// Its behaviour is chosen by environment variables:
//
//	PLUGIN_COUNT_FILE   append one line per run to this file
//	PLUGIN_INFO_FILE    write KUBERNETES_EXEC_INFO to this file
//	PLUGIN_TOKEN        token to return; "%d" is replaced by the run number
//	PLUGIN_EXPIRES_IN   Go duration: expirationTimestamp = now + duration
//	PLUGIN_EXPIRES_AT   literal expirationTimestamp
//	PLUGIN_CERT_FILE    PEM certificate to return as clientCertificateData
//	PLUGIN_KEY_FILE     PEM key to return as clientKeyData
//	PLUGIN_API_VERSION  apiVersion to answer with (default: the one asked)
//	PLUGIN_STDERR       text to write to stderr
//	PLUGIN_EXIT         exit with this code after writing stderr
//	PLUGIN_GARBAGE      print this instead of an ExecCredential
//	PLUGIN_SLEEP        Go duration to sleep before answering
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

func main() {
	run := 1
	if f := os.Getenv("PLUGIN_COUNT_FILE"); f != "" {
		fh, err := os.OpenFile(f, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
		check(err)
		_, err = fh.WriteString("run\n")
		check(err)
		check(fh.Close())
		b, err := os.ReadFile(f)
		check(err)
		run = strings.Count(string(b), "\n")
	}
	info := os.Getenv("KUBERNETES_EXEC_INFO")
	if f := os.Getenv("PLUGIN_INFO_FILE"); f != "" {
		check(os.WriteFile(f, []byte(info), 0o600))
	}
	if d := os.Getenv("PLUGIN_SLEEP"); d != "" {
		dur, err := time.ParseDuration(d)
		check(err)
		time.Sleep(dur)
	}
	if s := os.Getenv("PLUGIN_STDERR"); s != "" {
		fmt.Fprint(os.Stderr, s)
	}
	if c := os.Getenv("PLUGIN_EXIT"); c != "" {
		code, err := strconv.Atoi(c)
		check(err)
		os.Exit(code)
	}
	if g, ok := os.LookupEnv("PLUGIN_GARBAGE"); ok {
		fmt.Print(g)
		return
	}

	var in struct {
		APIVersion string `json:"apiVersion"`
	}
	check(json.Unmarshal([]byte(info), &in))
	apiVersion := in.APIVersion
	if v := os.Getenv("PLUGIN_API_VERSION"); v != "" {
		apiVersion = v
	}
	status := map[string]string{}
	if t := os.Getenv("PLUGIN_TOKEN"); t != "" {
		status["token"] = strings.ReplaceAll(t, "%d", strconv.Itoa(run))
	}
	if d := os.Getenv("PLUGIN_EXPIRES_IN"); d != "" {
		dur, err := time.ParseDuration(d)
		check(err)
		status["expirationTimestamp"] = time.Now().Add(dur).UTC().Format(time.RFC3339Nano)
	}
	if t := os.Getenv("PLUGIN_EXPIRES_AT"); t != "" {
		status["expirationTimestamp"] = t
	}
	if f := os.Getenv("PLUGIN_CERT_FILE"); f != "" {
		b, err := os.ReadFile(f)
		check(err)
		status["clientCertificateData"] = string(b)
	}
	if f := os.Getenv("PLUGIN_KEY_FILE"); f != "" {
		b, err := os.ReadFile(f)
		check(err)
		status["clientKeyData"] = string(b)
	}
	check(json.NewEncoder(os.Stdout).Encode(map[string]any{
		"apiVersion": apiVersion,
		"kind":       "ExecCredential",
		"status":     status,
	}))
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "execplugin:", err)
		os.Exit(99)
	}
}
