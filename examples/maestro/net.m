Network Resnet50 {
Layer CONV1 {
Type: CONV
Stride { X: 2, Y: 2 }
Dimensions { K: 64, C: 3, R: 7, S: 7, Y: 224, X: 224 }
Dataflow {
	SpatialMap(1,1) K;
	TemporalMap(64,64) C;
	TemporalMap(Sz(R),Sz(R)) R;
	TemporalMap(Sz(S),Sz(S)) S;
	TemporalMap(Sz(R),1) Y;
	TemporalMap(Sz(S),1) X;
	Cluster(64, P);
	SpatialMap(1,1) C;
	TemporalMap(Sz(R),1) Y;
	TemporalMap(Sz(S),1) X;
	TemporalMap(Sz(R),Sz(R)) R;
	TemporalMap(Sz(S),Sz(S)) S;
}
}
Layer CONV2_1_2 {
Type: CONV
Stride { X: 1, Y: 1 }
Dimensions { K: 64, C: 64, R: 3, S: 3, Y: 56, X: 56 }
Dataflow {
	TemporalMap(16,16) K;
	TemporalMap(16,16) C;
	SpatialMap(Sz(R),1) Y;
	TemporalMap(Sz(S),1) X;
	TemporalMap(Sz(R),Sz(R)) R;
	TemporalMap(Sz(S),Sz(S)) S;
	Cluster(Sz(R), P);
	SpatialMap(1,1) Y;
	SpatialMap(1,1) R;
	TemporalMap(Sz(S),Sz(S)) S;
}
}
}
