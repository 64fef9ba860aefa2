usesNinja=1
