package capacity

func SetSimPolicy(p string) { simPolicy = p }
