// Package remote speaks the streaming protocols of pods' exec, attach and
// portforward subresources for kdyn's commands, without client-go: the
// WebSocket protocol v5.channel.k8s.io (one binary message per chunk,
// its first byte the channel: stdin 0, stdout 1, stderr 2, the JSON
// Status of the result 3, terminal size 4, and 255 to close a channel),
// which kubectl uses since v1.31, and SPDY (apimachinery's httpstream)
// when the WebSocket upgrade is refused, with v4.channel.k8s.io for exec
// and attach and portforward.k8s.io for port-forward. Connections are
// upgraded through kdyn's HTTP/1.1 client (rest.Client.UpgradeClient), so
// kubeconfig authentication, impersonation and TLS verification apply as
// to every other request.
package remote
