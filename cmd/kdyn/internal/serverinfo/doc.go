// Package serverinfo holds the commands that tell what the server is and
// serves: api-resources (every resource type at its group's preferred
// version, filtered and sorted as kubectl does), api-versions and version.
//
// api-resources and api-versions revalidate the discovery cache with its
// ETags (from a server with aggregated discovery, two small requests, two
// 304s when nothing changed); api-resources
// --cached uses the disk cache as it is, with no request while it is warm.
// Group-versions whose discovery failed (an aggregated API whose backend
// is down) are named on stderr, and api-resources then exits 1 after
// printing the rest. version asks /version unless --client.
package serverinfo
