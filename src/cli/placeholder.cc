// placeholder: removed when the layer gets its first real source file
