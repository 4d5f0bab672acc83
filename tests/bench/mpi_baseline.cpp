// mpi_baseline.cpp - what the same exchanges cost with OpenMPI's shared memory.
//
//   mpirun -np 2 mpi_baseline pingpong <bytes> <iterations>   rank 0 <-> rank 1
//   mpirun -np 3 mpi_baseline ring <iterations>               0 -> 1 -> 2 -> 0, 8 B
//   mpirun -np N+1 mpi_baseline fanout <iterations>           0 -> each, each -> 0, 8 B
//   mpirun -np 2 mpi_baseline hop <bytes> <iterations>        0 -> 1 payload, 1 -> 0 8 B
//
// Rank 0 prints `median_ns=<n>`: the median of per-iteration wall times.
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

double median(std::vector<double> samples) {
  std::nth_element(samples.begin(), samples.begin() + samples.size() / 2, samples.end());
  return samples[samples.size() / 2];
}

} // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const char* mode = argc > 1 ? argv[1] : "";
  bool sized = std::strcmp(mode, "pingpong") == 0 || std::strcmp(mode, "hop") == 0;
  std::size_t bytes = sized ? std::strtoull(argv[2], nullptr, 10) : 8;
  int iterations = std::atoi(argv[sized ? 3 : 2]);
  int warmup = std::max(10, iterations / 10);
  std::vector<std::uint8_t> buffer(std::max<std::size_t>(bytes, 8));
  std::uint64_t word = 0;
  std::vector<double> samples;

  for (int i = 0; i < warmup + iterations; ++i) {
    auto start = Clock::now();
    if (std::strcmp(mode, "pingpong") == 0 || std::strcmp(mode, "hop") == 0) {
      bool hop = mode[0] == 'h';
      if (rank == 0) {
        MPI_Send(buffer.data(), static_cast<int>(bytes), MPI_BYTE, 1, 0, MPI_COMM_WORLD);
        MPI_Recv(buffer.data(), hop ? 8 : static_cast<int>(bytes), MPI_BYTE, 1, 0, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
      } else if (rank == 1) {
        MPI_Recv(buffer.data(), static_cast<int>(bytes), MPI_BYTE, 0, 0, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
        MPI_Send(buffer.data(), hop ? 8 : static_cast<int>(bytes), MPI_BYTE, 0, 0, MPI_COMM_WORLD);
      }
    } else if (std::strcmp(mode, "ring") == 0) {
      int next = (rank + 1) % size, previous = (rank + size - 1) % size;
      if (rank == 0) {
        MPI_Send(&word, 1, MPI_UINT64_T, next, 0, MPI_COMM_WORLD);
        MPI_Recv(&word, 1, MPI_UINT64_T, previous, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      } else {
        MPI_Recv(&word, 1, MPI_UINT64_T, previous, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(&word, 1, MPI_UINT64_T, next, 0, MPI_COMM_WORLD);
      }
    } else if (std::strcmp(mode, "fanout") == 0) {
      if (rank == 0) {
        for (int r = 1; r < size; ++r)
          MPI_Send(&word, 1, MPI_UINT64_T, r, 0, MPI_COMM_WORLD);
        for (int r = 1; r < size; ++r)
          MPI_Recv(&word, 1, MPI_UINT64_T, r, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      } else {
        MPI_Recv(&word, 1, MPI_UINT64_T, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(&word, 1, MPI_UINT64_T, 0, 0, MPI_COMM_WORLD);
      }
    } else {
      if (rank == 0)
        std::fprintf(stderr, "mpi_baseline: unknown mode '%s'\n", mode);
      MPI_Abort(MPI_COMM_WORLD, 64);
    }
    if (i >= warmup)
      samples.push_back(std::chrono::duration<double, std::nano>(Clock::now() - start).count());
  }
  if (rank == 0)
    std::printf("median_ns=%.0f\n", median(samples));
  MPI_Finalize();
}
