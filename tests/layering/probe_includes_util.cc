// Must compile: probe may use util (positive control for the two tests above).
#include "probe/facts.h"
#include "util/version.h"
int main() {
  return 0;
}
