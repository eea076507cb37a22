//go:build !chans_smallseg

package chans

// segShift sets the segment size, 1<<segShift cells. 32 cells keep a segment
// of int cells at 512 bytes plus header, small enough that a segment whose
// cells were all cancelled is found and unlinked soon, and large enough that
// the walk to the next segment happens once per 32 operations. Tests build
// with the tag chans_smallseg to set it to 2, so that segment boundaries,
// growth, the spare list and segment removal are crossed constantly.
const segShift = 5
