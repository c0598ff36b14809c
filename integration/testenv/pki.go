package testenv

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// Names of the generated files, relative to the env directory.
const (
	pkiDir            = "pki"
	servingCAFile     = "pki/serving-ca.crt"
	servingCAKeyFile  = "pki/serving-ca.key"
	servingCertFile   = "pki/serving.crt"
	servingKeyFile    = "pki/serving.key"
	clientCAFile      = "pki/client-ca.crt"
	clientCAKeyFile   = "pki/client-ca.key"
	certAdminCertFile = "pki/cert-admin.crt"
	certAdminKeyFile  = "pki/cert-admin.key"
	saKeyFile         = "pki/sa.key"
	saPubFile         = "pki/sa.pub"
	tokenFile         = "pki/tokens.csv"
	// The simulated kubelet's (KWOK's) serving certificate, from the
	// serving CA, and the apiserver's client certificate for kubelets,
	// from the client CA.
	kubeletCertFile       = "pki/kubelet.crt"
	kubeletKeyFile        = "pki/kubelet.key"
	kubeletClientCertFile = "pki/apiserver-kubelet-client.crt"
	kubeletClientKeyFile  = "pki/apiserver-kubelet-client.key"
)

// credentials is everything Start generates once per directory.
type credentials struct {
	servingCA      []byte // PEM
	clientCertData []byte // PEM
	clientKeyData  []byte // PEM
	adminToken     string
	nobodyToken    string
}

// generateCredentials writes a fresh PKI, service-account key pair and token
// file into dir.
func generateCredentials(dir string) (*credentials, error) {
	if err := os.MkdirAll(filepath.Join(dir, pkiDir), 0o700); err != nil {
		return nil, err
	}
	now := time.Now()
	files := map[string][]byte{}

	servingCA, servingCAKey, servingCAPEM, servingCAKeyPEM, err := newCA("kdyn-test-serving-ca", now)
	if err != nil {
		return nil, err
	}
	files[servingCAFile], files[servingCAKeyFile] = servingCAPEM, servingCAKeyPEM
	servingPEM, servingKeyPEM, err := newLeaf(servingCA, servingCAKey, now, &x509.Certificate{
		Subject:     pkix.Name{CommonName: "kube-apiserver"},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames: []string{"localhost", "kubernetes", "kubernetes.default",
			"kubernetes.default.svc", "kubernetes.default.svc.cluster.local"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback, net.IPv4(10, 0, 0, 1)},
	})
	if err != nil {
		return nil, err
	}
	files[servingCertFile], files[servingKeyFile] = servingPEM, servingKeyPEM

	clientCA, clientCAKey, clientCAPEM, clientCAKeyPEM, err := newCA("kdyn-test-client-ca", now)
	if err != nil {
		return nil, err
	}
	files[clientCAFile], files[clientCAKeyFile] = clientCAPEM, clientCAKeyPEM
	certAdminPEM, certAdminKeyPEM, err := newLeaf(clientCA, clientCAKey, now, &x509.Certificate{
		Subject:     pkix.Name{CommonName: CertAdminUserName, Organization: []string{"system:masters"}},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	})
	if err != nil {
		return nil, err
	}
	files[certAdminCertFile], files[certAdminKeyFile] = certAdminPEM, certAdminKeyPEM

	saKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, err
	}
	saKeyDER, err := x509.MarshalPKCS8PrivateKey(saKey)
	if err != nil {
		return nil, err
	}
	saPubDER, err := x509.MarshalPKIXPublicKey(&saKey.PublicKey)
	if err != nil {
		return nil, err
	}
	files[saKeyFile] = pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: saKeyDER})
	files[saPubFile] = pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: saPubDER})

	c := &credentials{
		servingCA:      servingCAPEM,
		clientCertData: certAdminPEM,
		clientKeyData:  certAdminKeyPEM,
		adminToken:     randomToken(),
		nobodyToken:    randomToken(),
	}
	// token,user,uid,"group1,group2"
	files[tokenFile] = fmt.Appendf(nil, "%s,%s,%s,\"system:masters\"\n%s,%s,%s\n",
		c.adminToken, AdminUserName, AdminUserName, c.nobodyToken, NobodyUserName, NobodyUserName)

	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			return nil, err
		}
	}
	// Kubelet certificates left by an earlier, failed start were signed by
	// the CAs just replaced: ensureKubeletCerts writes new ones.
	for _, name := range []string{kubeletCertFile, kubeletKeyFile, kubeletClientCertFile, kubeletClientKeyFile} {
		if err := os.Remove(filepath.Join(dir, name)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
	}
	return c, nil
}

// loadCredentials reads what generateCredentials wrote.
func loadCredentials(dir string, st *state) (*credentials, error) {
	read := func(name string) ([]byte, error) { return os.ReadFile(filepath.Join(dir, name)) }
	c := &credentials{adminToken: st.AdminToken, nobodyToken: st.NobodyToken}
	var err error
	if c.servingCA, err = read(servingCAFile); err != nil {
		return nil, err
	}
	if c.clientCertData, err = read(certAdminCertFile); err != nil {
		return nil, err
	}
	if c.clientKeyData, err = read(certAdminKeyFile); err != nil {
		return nil, err
	}
	for _, f := range []string{servingCertFile, servingKeyFile, clientCAFile, saKeyFile, saPubFile, tokenFile} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			return nil, err
		}
	}
	if _, err := tls.X509KeyPair(c.clientCertData, c.clientKeyData); err != nil {
		return nil, fmt.Errorf("%s: %w", certAdminCertFile, err)
	}
	if c.adminToken == "" || c.nobodyToken == "" {
		return nil, errors.New("state has no tokens")
	}
	return c, nil
}

func randomToken() string {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	return hex.EncodeToString(b)
}

const certValidity = 5 * 365 * 24 * time.Hour

func newCA(name string, now time.Time) (*x509.Certificate, crypto.Signer, []byte, []byte, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(certValidity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	keyPEM, err := encodeKey(key)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	return cert, key, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), keyPEM, nil
}

func newLeaf(ca *x509.Certificate, caKey crypto.Signer, now time.Time, tmpl *x509.Certificate) (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	tmpl.SerialNumber = serial()
	tmpl.NotBefore = now.Add(-time.Hour)
	tmpl.NotAfter = now.Add(certValidity)
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, key.Public(), caKey)
	if err != nil {
		return nil, nil, err
	}
	keyPEM, err = encodeKey(key)
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), keyPEM, nil
}

func encodeKey(key crypto.Signer) ([]byte, error) {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		panic(err)
	}
	return n
}

// ensureKubeletCerts writes the kubelet serving certificate and the
// apiserver's kubelet client certificate, from the CAs in dir, unless both
// are there (a directory from before they existed gets them on its next
// start).
func ensureKubeletCerts(dir string) error {
	f := func(name string) string { return filepath.Join(dir, name) }
	have := true
	for _, name := range []string{kubeletCertFile, kubeletKeyFile, kubeletClientCertFile, kubeletClientKeyFile} {
		if _, err := os.Stat(f(name)); err != nil {
			have = false
		}
	}
	if have {
		return nil
	}
	now := time.Now()
	leaf := func(caCert, caKey string, tmpl *x509.Certificate) ([]byte, []byte, error) {
		pair, err := tls.LoadX509KeyPair(f(caCert), f(caKey))
		if err != nil {
			return nil, nil, err
		}
		ca, err := x509.ParseCertificate(pair.Certificate[0])
		if err != nil {
			return nil, nil, err
		}
		signer, ok := pair.PrivateKey.(crypto.Signer)
		if !ok {
			return nil, nil, fmt.Errorf("%s: not a signing key", caKey)
		}
		return newLeaf(ca, signer, now, tmpl)
	}
	files := map[string][]byte{}
	var err error
	files[kubeletCertFile], files[kubeletKeyFile], err = leaf(servingCAFile, servingCAKeyFile, &x509.Certificate{
		Subject:     pkix.Name{CommonName: "kwok-kubelet"},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:    []string{"localhost"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
	})
	if err != nil {
		return err
	}
	files[kubeletClientCertFile], files[kubeletClientKeyFile], err = leaf(clientCAFile, clientCAKeyFile, &x509.Certificate{
		Subject:     pkix.Name{CommonName: "kube-apiserver-kubelet-client", Organization: []string{"system:masters"}},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	})
	if err != nil {
		return err
	}
	for name, data := range files {
		if err := os.WriteFile(f(name), data, 0o600); err != nil {
			return err
		}
	}
	return nil
}
