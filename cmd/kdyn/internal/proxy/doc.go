// Package proxy holds "kdyn proxy": kubectl proxy's local HTTP server in
// front of the API server. A request to the local address is checked
// against the filters (--accept-hosts, --accept-paths, --reject-paths,
// --reject-methods; refused with 403 and kubectl's "<h3>Unauthorized</h3>")
// and sent on to the server with the kubeconfig's credentials, TLS and
// impersonation; --api-prefix moves the API below a path and --www serves
// a directory below --www-prefix. The server's answers, streams (watches)
// included, are copied back unchanged.
//
// The credentials stay in the process: the local side is plain HTTP on
// 127.0.0.1 by default, which anyone with access to that port may use, as
// with kubectl; --address and --accept-hosts widen it only when asked.
package proxy
