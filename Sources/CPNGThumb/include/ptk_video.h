#ifndef PTK_VIDEO_H
#define PTK_VIDEO_H
/* A video's poster (issue 58): its first picture, decoded with FFmpeg's libraries
 * (libavformat reads the MP4 or MOV through the descriptor, libavcodec decodes H.264 or HEVC
 * on one thread, libswscale makes RGB), then scaled in linear light and encoded like a photo's
 * renditions. */
#include "ptk_png.h"

/* Makes the renditions `request` asks for from the first picture of the video in `fd`
 * (read with pread; fd is not closed). Only the MP4/MOV demuxer and the H.264 and HEVC
 * decoders are used; a picture of more than max_pixels pixels is refused before any decode
 * (PTK_PNG_TOO_LARGE), as is one whose decode would need more than the memory limit; the
 * decoder takes no picture larger than the track declares, and key pictures only; FFmpeg
 * allocates at most 256 MiB at once; at most 128 MiB of the file, 600 packets and 5 s of
 * processor time go into looking for it. The track's display matrix
 * becomes facts.orientation (the renditions are turned as shown); out->width/height are the
 * coded picture's. `cancel`, if not NULL, is checked between packets and by libavformat's
 * interrupt callback. */
int ptk_video_render(int fd, const ptk_render_request *request, uint64_t max_pixels, const volatile int *cancel,
                     ptk_thumbnail_result *out);

#endif
