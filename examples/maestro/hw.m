num_pes: 256
l1_size_cstr: 2048
l2_size_cstr: 108000
noc_bw_cstr: 64
offchip_bw_cstr: 64
