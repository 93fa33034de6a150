/* Prints the number of usable CUDA devices (0 without a GPU or a driver);
 * `make test-cuda` and `make bench-cuda` use it to skip on such machines. */
#include <stdio.h>

#include "kernels/kernels.h"

int main(void)
{
    printf("%d\n", sl_cuda_device_count());
    return 0;
}
