package dynamic

import "strings"

// client-go's dynamic client builds its paths with path.Join, so slashes at
// either end of a GVR's resource or of a subresource vanish from the URL it
// sends: Resource "rtest/" with subresource "srtest" is
// .../rtest/NAME/srtest, and an empty subresource adds nothing. kdyn sends
// the same path. What remains is checked as a path segment by
// rest.Request (Resource, SubResource) as before, so a resource or
// subresource with an inner "/" ("a/b"), one that is "." or "..", one with
// "%", or a resource that is only slashes, is still refused before anything
// is sent.

// resourceSegment returns res without leading and trailing slashes, unless
// nothing else is left, in which case res is returned for rest.Request to
// refuse.
func resourceSegment(res string) string {
	if t := strings.Trim(res, "/"); t != "" {
		return t
	}
	return res
}

// subresourceSegments returns subs with slashes trimmed from either end of
// each and the elements that are then empty left out; subs itself when
// nothing needs trimming.
func subresourceSegments(subs []string) []string {
	for i, s := range subs {
		if s != "" && s[0] != '/' && s[len(s)-1] != '/' {
			continue
		}
		out := append([]string(nil), subs[:i]...)
		for _, s := range subs[i:] {
			if t := strings.Trim(s, "/"); t != "" {
				out = append(out, t)
			}
		}
		return out
	}
	return subs
}
