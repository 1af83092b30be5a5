// SPDX-License-Identifier: MIT
#include <stdio.h>
int main(void)
{
	puts("ttmsim");
	return 0;
}
