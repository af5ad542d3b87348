// SPDX-License-Identifier: MIT
/*
 * sym_cpp: CPU time in a method of a class template in a namespace, so its
 * symbol is mangled (_ZN2ns4TypeIiE6methodEl) and the profile must show it
 * demangled: ns::Type<int>::method(long).  sym_cpp [SECONDS]; prints its pid.
 */
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <unistd.h>

namespace ns {
template <typename T> struct Type {
	volatile T acc;
	__attribute__((noinline)) long method(long n);
};

template <typename T> __attribute__((noinline)) long Type<T>::method(long n)
{
	long s = 0;

	for (long i = 0; i < n; i++)
		s += i ^ (acc = static_cast<T>(i));
	return s;
}

template struct Type<int>;
} // namespace ns

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 10;
	auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(secs);
	ns::Type<int> t{};
	long sink = 0;

	printf("%d\n", getpid());
	fflush(stdout);
	while (std::chrono::steady_clock::now() < end)
		sink += t.method(200000);
	return sink == 42;
}
