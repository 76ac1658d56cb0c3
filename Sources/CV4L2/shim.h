// CV4L2: libv4l2 and the V4L2 UAPI for Swift.
//
// libv4l2's entry points are variadic (v4l2_open, v4l2_ioctl) and the VIDIOC_* requests are macros built from
// sizeof, so neither imports into Swift: this header re-exports them as static inline wrappers and constants.
// The _Static_asserts pin the struct sizes colorcam relies on (x86_64 / aarch64 Linux, 64-bit time_t in timeval).
#ifndef COLORCAM_CV4L2_SHIM_H
#define COLORCAM_CV4L2_SHIM_H
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <sys/mman.h>
#include <linux/videodev2.h>
#include <libv4l2.h>

_Static_assert(sizeof(struct v4l2_capability) == 104, "v4l2_capability layout");
_Static_assert(sizeof(struct v4l2_format) == 208, "v4l2_format layout");
_Static_assert(sizeof(struct v4l2_buffer) == 88, "v4l2_buffer layout");
_Static_assert(sizeof(struct v4l2_requestbuffers) == 20, "v4l2_requestbuffers layout");
_Static_assert(sizeof(struct v4l2_streamparm) == 204, "v4l2_streamparm layout");
_Static_assert(sizeof(struct v4l2_fmtdesc) == 64, "v4l2_fmtdesc layout");
_Static_assert(sizeof(struct v4l2_frmsizeenum) == 44, "v4l2_frmsizeenum layout");
_Static_assert(sizeof(struct v4l2_frmivalenum) == 52, "v4l2_frmivalenum layout");

/// Opens a V4L2 node for libv4l2: open(2), a raw VIDIOC_QUERYCAP (so that a node that is not V4L2 fails with
/// ENOTTY quietly: libv4l2 itself would print to stderr), then v4l2_fd_open. Returns -1 with errno on failure.
static inline int ccv4l2_open(const char *path, int flags) {
    int fd = open(path, flags);
    if (fd < 0) return -1;
    struct v4l2_capability cap;
    if (ioctl(fd, VIDIOC_QUERYCAP, &cap) < 0) {
        int saved = errno;
        close(fd);
        errno = saved;
        return -1;
    }
    int wrapped = v4l2_fd_open(fd, 0);
    if (wrapped < 0) {
        int saved = errno;
        close(fd);
        errno = saved;
    }
    return wrapped;
}
/// v4l2_close(fd).
static inline int ccv4l2_close(int fd) { return v4l2_close(fd); }
/// v4l2_ioctl(fd, request, arg).
static inline int ccv4l2_ioctl(int fd, unsigned long request, void *arg) { return v4l2_ioctl(fd, request, arg); }
/// v4l2_mmap(NULL, length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, offset); NULL on failure (not MAP_FAILED).
static inline void *ccv4l2_mmap(int fd, size_t length, int64_t offset) {
    void *p = v4l2_mmap(NULL, length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, offset);
    return p == MAP_FAILED ? NULL : p;
}
/// v4l2_munmap(start, length).
static inline int ccv4l2_munmap(void *start, size_t length) { return v4l2_munmap(start, length); }

// The requests colorcam issues (each is a sizeof-built macro in videodev2.h).
static const unsigned long CCV4L2_VIDIOC_QUERYCAP = VIDIOC_QUERYCAP;
static const unsigned long CCV4L2_VIDIOC_ENUM_FMT = VIDIOC_ENUM_FMT;
static const unsigned long CCV4L2_VIDIOC_ENUM_FRAMESIZES = VIDIOC_ENUM_FRAMESIZES;
static const unsigned long CCV4L2_VIDIOC_ENUM_FRAMEINTERVALS = VIDIOC_ENUM_FRAMEINTERVALS;
static const unsigned long CCV4L2_VIDIOC_G_FMT = VIDIOC_G_FMT;
static const unsigned long CCV4L2_VIDIOC_S_FMT = VIDIOC_S_FMT;
static const unsigned long CCV4L2_VIDIOC_G_PARM = VIDIOC_G_PARM;
static const unsigned long CCV4L2_VIDIOC_S_PARM = VIDIOC_S_PARM;
static const unsigned long CCV4L2_VIDIOC_REQBUFS = VIDIOC_REQBUFS;
static const unsigned long CCV4L2_VIDIOC_QUERYBUF = VIDIOC_QUERYBUF;
static const unsigned long CCV4L2_VIDIOC_QBUF = VIDIOC_QBUF;
static const unsigned long CCV4L2_VIDIOC_DQBUF = VIDIOC_DQBUF;
static const unsigned long CCV4L2_VIDIOC_STREAMON = VIDIOC_STREAMON;
static const unsigned long CCV4L2_VIDIOC_STREAMOFF = VIDIOC_STREAMOFF;
#endif
