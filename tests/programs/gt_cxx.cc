// SPDX-License-Identifier: MIT
/*
 * Ground truth "cxx" (issue 34.7): a thread blocks inside a namespaced, templated C++ member
 * function, ns::Worker<int>::wait_for_lock(), on a std::mutex that another thread holds across
 * a 300 ms sleep. Its stack must print that name demangled (tests/e2e/gt_cxx.sh).
 *
 *   gt_cxx [--ms N]      hold the lock N ms (default 300), then exit 0
 */
#include <pthread.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>

namespace ns
{
template <typename T> struct Worker {
	std::mutex &m;
	T got;

	// kept a frame of its own: the name the test looks for
	__attribute__((noinline)) void wait_for_lock()
	{
		std::lock_guard<std::mutex> g(m);
		got = T(1);
		asm volatile("" ::: "memory");
	}
};
} // namespace ns

int main(int argc, char **argv)
{
	long ms = 300;
	std::mutex m;
	ns::Worker<int> w{ m, 0 };

	if (argc == 3 && !strcmp(argv[1], "--ms"))
		ms = atol(argv[2]);
	m.lock();
	std::thread t([&w] {
		pthread_setname_np(pthread_self(), "cxx-worker");
		w.wait_for_lock();
	});
	std::this_thread::sleep_for(std::chrono::milliseconds(ms));
	m.unlock();
	t.join();
	std::printf("gt_cxx: the worker waited %ld ms in ns::Worker<int>::wait_for_lock()\n", ms);
	return w.got == 1 ? 0 : 1;
}
