/* The wire format of the "requests" ground truth (tests/programs/gt_req.c, gt_req_client.c). */
#ifndef GT_REQ_H
#define GT_REQ_H

#include <stdint.h>

/* One request or reply: 8 bytes, each sent by one send() and received by one recv(MSG_WAITALL).
 * The reply echoes type and seq. */
struct gt_req_msg {
	uint8_t type; /* 'c' CPU only, 'l' behind the lock held across disk reads, 'b' backend */
	uint8_t pad[3];
	uint32_t seq; /* host order: both ends are on one machine */
};

_Static_assert(sizeof(struct gt_req_msg) == 8, "gt_req_msg is 8 bytes");

/* The fixed mix: request number i (0-based, over all connections) is of this type.
 * 8 of 10 'c', 1 'l', 1 'b'. */
static inline char gt_req_type(uint32_t i)
{
	switch (i % 10) {
	case 3:
		return 'l';
	case 7:
		return 'b';
	default:
		return 'c';
	}
}

/* Own CPU work of a 'c' request: 0.3 to 1.0 ms of thread CPU time. */
static inline uint64_t gt_req_cpu_ns(uint32_t seq)
{
	return 300000u + (uint64_t)((seq * 7u) % 8u) * 100000u;
}

/* The backend's CPU work for a 'b' request: 20 to 40 ms of thread CPU time. */
static inline uint64_t gt_req_backend_ns(uint32_t seq)
{
	return 20000000u + (uint64_t)((seq / 10u) % 5u) * 5000000u; /* 'b' is seq % 10 == 7 */
}

#endif
