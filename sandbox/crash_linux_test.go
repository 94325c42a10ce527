package sandbox

func crasherMain() int { return 0 }
