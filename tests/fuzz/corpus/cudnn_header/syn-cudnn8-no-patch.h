// CUDNN_MAJOR 1 in a comment
#define CUDNN_MAJOR_X 3
#define CUDNN_MAJOR 8
#define CUDNN_MINOR 9
