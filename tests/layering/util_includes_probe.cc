// Must NOT compile: util is the bottom layer and cannot see probe/.
#include "probe/facts.h"
int main() {
  return 0;
}
