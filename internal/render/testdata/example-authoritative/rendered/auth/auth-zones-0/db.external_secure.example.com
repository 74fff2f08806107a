$ORIGIN secure.example.com.
$TTL 3600
secure.example.com. 3600 IN SOA ns1.example.com. hostmaster.secure.example.com. 1 300 60 1209600 60 ; content sha256:a319d7a478f11856143e893417e09ff7a5cf7dfa12eb1d450d5bd50a715bc07c
secure.example.com. 3600 IN A 198.51.100.80
secure.example.com. 3600 IN NS ns1.example.com.
www.secure.example.com. 3600 IN A 198.51.100.80
